// Shared differential test: MemoryStore and a RedisStore give identical decisions and headers on random traces.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import {
  type AnyPolicy,
  createLimiter,
  type Decision,
  fixedWindow,
  MemoryStore,
  rateLimitHeaders,
  slidingWindow,
  slidingWindowCounter,
  tokenBucket,
} from '../../src/index.js';
import type { RedisStore, RedisStoreOptions } from '../../src/stores/redis/index.js';
import { TestClock } from './store-contract.js';

/** What the differential needs from the store it is given; the target spreads these into its RedisStore. */
export type DifferentialStoreOptions = Required<
  Pick<RedisStoreOptions, 'clock' | 'minTtlSeconds' | 'localDenyCache'>
>;

export interface RedisFixture {
  readonly store: RedisStore;
  close(): Promise<void>;
  /** A bucket key's TTL in ms (-1: none), as the server reports it. */
  pttl?(key: string): Promise<number>;
}

const limit = fc.integer({ min: 0, max: 12 });
const windowMs = fc.integer({ min: 1, max: 20_000 });
const policy: fc.Arbitrary<AnyPolicy[]> = fc.oneof(
  fc
    .record({ capacity: limit, refillPerSecond: fc.constantFrom(0, 0.25, 0.5, 1, 3, 7, 1000, 4000) })
    .map((o) => [tokenBucket(o)]),
  fc.record({ limit, windowMs }).map((o) => [fixedWindow(o)]),
  fc.record({ limit, windowMs }).map((o) => [slidingWindow(o)]),
  fc.record({ limit, windowMs }).map((o) => [slidingWindowCounter(o)]),
  fc
    .record({ capacity: limit, limit, windowMs })
    .map((o) => [
      tokenBucket({ capacity: o.capacity, refillPerSecond: 2, name: 'burst' }),
      slidingWindowCounter({ limit: o.limit, windowMs: o.windowMs, name: 'sustained' }),
    ]),
);
const step = fc.record({
  // Mostly small steps, some long idle gaps, and now and then a clock that goes backwards.
  dt: fc.oneof(
    fc.integer({ min: 0, max: 400 }),
    fc.integer({ min: 0, max: 30_000 }),
    fc.integer({ min: -2_000, max: -1 }),
  ),
  id: fc.constantFrom('a', 'b', '{c}'),
  cost: fc.integer({ min: 1, max: 4 }),
  peek: fc.boolean(),
});

/** Everything a client or a header could observe, with the policy objects reduced to their names. */
function observable(decision: Decision) {
  return {
    ...decision,
    policies: decision.policies.map(({ policy, ...result }) => ({ ...result, name: policy.name })),
    draft6: rateLimitHeaders(decision, 'draft-6'),
    draft10: rateLimitHeaders(decision, 'draft-10'),
  };
}

export function runDifferential(
  name: string,
  makeRedisStore: (options: DifferentialStoreOptions) => Promise<RedisFixture>,
  { numRuns = 250 }: { numRuns?: number } = {},
): void {
  describe(`differential: MemoryStore and ${name}`, () => {
    const clock = new TestClock();
    let fixture: RedisFixture | undefined;
    // Keys outlive a run by an hour (below); a per-run tag keeps a reused TEST_REDIS_* server from replaying them.
    const run = randomUUID().slice(0, 8);
    let traces = 0;
    after(async () => fixture?.close());

    it('gives identical decisions and headers on random traces', async () => {
      // A least TTL long enough that expiry never decides anything the memory engine keeps (keys expire on the
      // server's real clock, while the traces move an injected one). The deny cache
      // repeats a denial with the remaining count of its moment; it has its own test (deny-cache.test.ts), so
      // here every decision is Redis's.
      fixture = await makeRedisStore({
        clock: clock.read,
        minTtlSeconds: 3600,
        localDenyCache: 0,
      });
      const redis = fixture.store;
      await fc.assert(
        fc.asyncProperty(policy, fc.array(step, { minLength: 1, maxLength: 40 }), async (policies, steps) => {
          const scope = `diff-${run}-${++traces}`;
          const memory = createLimiter({
            policy: policies,
            scope,
            store: new MemoryStore({ clock: clock.read, autoCleanup: false }),
          });
          const remote = createLimiter({ policy: policies, scope, store: redis });
          for (const { dt, id, cost, peek } of steps) {
            clock.now += dt;
            const [m, r] = peek
              ? [await memory.peek(id, { cost }), await remote.peek(id, { cost })]
              : [await memory.consume(id, { cost }), await remote.consume(id, { cost })];
            assert.deepEqual(observable(r), observable(m));
          }
        }),
        { numRuns },
      );
      assert.equal(redis.metrics.degradedAllowed + redis.metrics.degradedDenied, 0);
    });
  });
}
