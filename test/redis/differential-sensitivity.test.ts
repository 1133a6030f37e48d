// The differential test earns its trust: with an off-by-one planted in each Lua twin, its generator finds a trace
// on which the two engines differ. The plant reaches Redis through a client that sends the altered script.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { BUILT_IN_ENGINE } from '../../src/stores/redis/engine/engine.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { TestClock } from '../../src/testing/test-clock.js';
import { limiters, replay, traces } from '../contract/differential.js';
import { plantedClient } from '../harness/planted-client.js';
import { type RedisServer, startRedisServer } from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';

const { script: SCRIPT } = BUILT_IN_ENGINE;

/** Each plant moves one boundary of one twin by a single step: the bug a hand port most easily makes. */
const PLANTS = [
  {
    kind: 'fixed-window',
    from: 'if now >= start + window then start, count',
    to: 'if now > start + window then start, count',
  },
  {
    kind: 'aligned-window',
    from: 'local open = floor_div(now_ms, p[2]) * p[2]',
    to: 'local open = floor_div(now_ms + 1, p[2]) * p[2]',
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
  { kind: 'concurrency', from: 'if held + takes <= max then', to: 'if held + takes < max then' },
  {
    kind: 'token-bucket',
    twin: 'token-bucket refund',
    from: 'owed = now_ms * 1000, math.min(cost * interval,',
    to: 'owed = now_ms * 1000, math.min((cost - 1) * interval,',
  },
  {
    kind: 'token-bucket',
    twin: 'token-bucket late refund',
    from: 'local full = spent_at * 1000 + cost * interval',
    to: 'local full = (spent_at + 1) * 1000 + cost * interval',
  },
  {
    kind: 'token-bucket',
    twin: 'token-bucket busy refund',
    from: 'full = math.max(full, (spent_at + spent_reset) * 1000',
    to: 'full = math.max(full, (spent_at + spent_reset - 1) * 1000',
  },
  {
    kind: 'fixed-window',
    twin: 'fixed-window refund',
    from: 'return { start, math.max(0, count - cost) }',
    to: 'return { start, math.max(0, count - cost + 1) }',
  },
  {
    kind: 'fixed-window',
    twin: 'fixed-window late refund',
    from: 'if spent_at < start or',
    to: 'if spent_at < start - 1 or',
  },
  {
    kind: 'sliding-window',
    twin: 'sliding-window late refund',
    from: 'while stop > drop and log[stop] > spent_at do',
    to: 'while stop > drop and log[stop] > spent_at + 1 do',
  },
  {
    kind: 'sliding-window-counter',
    twin: 'sliding-window-counter late refund',
    from: 'local in_current = spent_at >= start',
    to: 'local in_current = spent_at >= start - 1',
  },
  {
    kind: 'token-bucket',
    twin: 'lockout',
    lockout: true,
    from: 'if block_ms > 0 then ends = now_ms + block_ms end',
    to: 'if block_ms > 0 then ends = now_ms + block_ms - 1 end',
  },
] as const satisfies readonly Plant[];

interface Plant {
  readonly kind: string;
  /** What the plant is in, when not the kind's own decision. */
  readonly twin?: string;
  readonly lockout?: boolean;
  readonly from: string;
  readonly to: string;
}

describeWithRedis('the differential generator against planted bugs', () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => server.stop());

  for (const plant of PLANTS as readonly Plant[]) {
    const { kind, from, to } = plant;
    it(`finds an off-by-one planted in the ${plant.twin ?? kind} twin`, async () => {
      // A text twins share (the fixed and the aligned window's steps) is planted in each: a trace runs its kind's.
      assert.ok(SCRIPT.includes(from), `the plant's text is in the script: ${from}`);
      const client = new Redis(server.url);
      const clock = new TestClock();
      const store = new RedisStore({
        client: plantedClient(client, SCRIPT.replaceAll(from, to)),
        clock: clock.read,
        minTtlSeconds: 3600,
        localDenyCache: 0,
      });
      let played = 0;
      try {
        // A fixed seed keeps the test deterministic; the note in docs/testing.md gives the rates over random seeds.
        const outcome = await fc.check(
          fc.asyncProperty(traces(kind, { withLockout: plant.lockout ?? false }), async (trace) => {
            const [memory, remote] = limiters(trace, `${kind}-${++played}`, clock, store);
            await replay(clock, memory, remote, trace);
          }),
          { numRuns: 300, seed: 20261130, endOnFailure: true },
        );
        assert.equal(
          outcome.failed,
          true,
          `no trace of 300 told the planted ${plant.twin ?? kind} twin apart`,
        );
        assert.equal(store.metrics.degradedAllowed + store.metrics.degradedDenied, 0);
      } finally {
        await store.close();
        client.disconnect();
      }
    });
  }
});
