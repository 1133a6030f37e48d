// The differential test earns its trust: with an off-by-one planted in each Lua twin, its generator finds a trace
// on which the two engines differ. The plant reaches Redis through a client that sends the altered script.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { createLimiter, MemoryStore } from '../../src/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { SCRIPT } from '../../src/stores/redis/script.js';
import { replay, traces } from '../contract/differential.js';
import { TestClock } from '../contract/store-contract.js';
import { type RedisServer, startRedisServer } from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';

/** Each plant moves one boundary of one twin by a single step: the bug a hand port most easily makes. */
const PLANTS = [
  {
    kind: 'fixed-window',
    from: 'if now >= start + window then start, count',
    to: 'if now > start + window then start, count',
  },
  {
    kind: 'sliding-window',
    from: 'log[drop + 1] <= now - window do drop = drop + 1 end\n    local used',
    to: 'log[drop + 1] < now - window do drop = drop + 1 end\n    local used',
  },
  {
    kind: 'sliding-window-counter',
    from: 'elseif now >= start + window then',
    to: 'elseif now > start + window then',
  },
  { kind: 'token-bucket', from: 'if next - tau <= now then', to: 'if next - tau < now then' },
] as const;

/** An ioredis client whose every script call runs `script` instead of the store's own. */
function plantedClient(client: Redis, script: string): Redis {
  return new Proxy(client, {
    get(target, property) {
      if (property === 'evalsha' || property === 'eval')
        return (_script: string, ...keysAndArgs: unknown[]) =>
          Reflect.apply(target.eval, target, [script, ...keysAndArgs]);
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describeWithRedis('the differential generator against planted bugs', () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => server.stop());

  for (const { kind, from, to } of PLANTS) {
    it(`finds an off-by-one planted in the ${kind} twin`, async () => {
      assert.equal(SCRIPT.split(from).length, 2, `the plant's text occurs once in the script: ${from}`);
      const client = new Redis(server.url);
      const clock = new TestClock();
      const store = new RedisStore({
        client: plantedClient(client, SCRIPT.replace(from, to)),
        clock: clock.read,
        minTtlSeconds: 3600,
        localDenyCache: 0,
      });
      let played = 0;
      try {
        // A fixed seed keeps the test deterministic; the note in docs/testing.md gives the rates over random seeds.
        const outcome = await fc.check(
          fc.asyncProperty(traces(kind), async ([policies, steps]) => {
            const scope = `${kind}-${++played}`;
            const memory = createLimiter({
              policy: policies,
              scope,
              store: new MemoryStore({ clock: clock.read, autoCleanup: false }),
            });
            await replay(clock, memory, createLimiter({ policy: policies, scope, store }), steps);
          }),
          { numRuns: 300, seed: 20261130, endOnFailure: true },
        );
        assert.equal(outcome.failed, true, `no trace of 300 told the planted ${kind} twin apart`);
        assert.equal(store.metrics.degradedAllowed + store.metrics.degradedDenied, 0);
      } finally {
        await store.close();
        client.disconnect();
      }
    });
  }
});
