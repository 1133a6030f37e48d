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
  type Limiter,
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
const policyOf: Record<string, fc.Arbitrary<AnyPolicy[]>> = {
  'token-bucket': fc
    .record({ capacity: limit, refillPerSecond: fc.constantFrom(0, 0.25, 0.5, 1, 3, 7, 1000, 4000) })
    .map((o) => [tokenBucket(o)]),
  'fixed-window': fc.record({ limit, windowMs }).map((o) => [fixedWindow(o)]),
  'sliding-window': fc.record({ limit, windowMs }).map((o) => [slidingWindow(o)]),
  'sliding-window-counter': fc.record({ limit, windowMs }).map((o) => [slidingWindowCounter(o)]),
  'burst+sustained': fc
    .record({ capacity: limit, limit, windowMs })
    .map((o) => [
      tokenBucket({ capacity: o.capacity, refillPerSecond: 2, name: 'burst' }),
      slidingWindowCounter({ limit: o.limit, windowMs: o.windowMs, name: 'sustained' }),
    ]),
};

/**
 * Where the next request arrives. `random`: a random step. The others aim at the instants where a state changes,
 * taken from the memory engine's last decision for the same client, give or take 1 ms: `reset`, when a policy
 * comes back to rest (a window ends, a bucket is full); `retry`, when a denied request could first pass (a token
 * refills, enough of a log expires); `expiry`, one window after an earlier admitted request (that log entry
 * expires, a counter's window turns over).
 */
type Aim = 'random' | 'reset' | 'retry' | 'expiry';

const step = fc.record({
  aim: fc.constantFrom<Aim>('random', 'random', 'reset', 'retry', 'expiry', 'expiry'),
  // Mostly small steps, some long idle gaps, and now and then a clock that goes backwards.
  dt: fc.oneof(
    fc.integer({ min: 0, max: 400 }),
    fc.integer({ min: 0, max: 30_000 }),
    fc.integer({ min: -2_000, max: -1 }),
  ),
  off: fc.constantFrom(-1, 0, 1),
  /** Which policy, or which earlier request, the aim takes its instant from. */
  pick: fc.nat(),
  id: fc.constantFrom('a', 'b', '{c}'),
  // Spending nothing, a few units, and more than a small limit holds (a denial that no wait cures).
  cost: fc.oneof(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 14 })),
  peek: fc.boolean(),
});
type Step = typeof step extends fc.Arbitrary<infer T> ? T : never;

/** A random limiter and a trace of requests against it. */
export function traces(kind?: keyof typeof policyOf): fc.Arbitrary<[AnyPolicy[], Step[]]> {
  const policy =
    kind === undefined ? fc.oneof(...Object.values(policyOf)) : (policyOf[kind] as fc.Arbitrary<AnyPolicy[]>);
  return fc.tuple(policy, fc.array(step, { minLength: 1, maxLength: 40 }));
}

/** Per client: the memory engine's last decision and the instants its requests were admitted. */
interface Seen {
  last?: Decision;
  admitted: number[];
}

/** The clock for the next step: aimed at an instant where a state changes, or a random step. */
function nextNow(
  now: number,
  { aim, dt, off, pick }: Step,
  seen: Seen,
  policies: readonly AnyPolicy[],
): number {
  const policy = policies[pick % policies.length] as AnyPolicy;
  const result = seen.last?.policies[pick % policies.length];
  let target: number | undefined;
  if (aim === 'reset' && result !== undefined && result.resetMs > 0)
    target = (seen.last?.nowMs ?? now) + result.resetMs;
  if (aim === 'retry' && result !== undefined && result.retryAfterMs > 0)
    target = (seen.last?.nowMs ?? now) + result.retryAfterMs;
  if (aim === 'expiry' && seen.admitted.length > 0)
    target = (seen.admitted[pick % seen.admitted.length] as number) + policy.windowMs;
  // An instant long past would only be a clock far out of step: that has its random steps.
  return target !== undefined && target + off >= now - 2_000 ? target + off : now + dt;
}

/** Everything a client or a header could observe, with the policy objects reduced to their names. */
function observable(decision: Decision) {
  return {
    ...decision,
    policies: decision.policies.map(({ policy, ...result }) => ({ ...result, name: policy.name })),
    draft6: rateLimitHeaders(decision, 'draft-6'),
    draft10: rateLimitHeaders(decision, 'draft-10'),
  };
}

/**
 * Plays a trace through both limiters on one clock and fails at the first decision on which they differ. Every
 * figure must be a whole number: a NaN or a fraction would be a bug even where both engines agree on it.
 */
export async function replay(
  clock: TestClock,
  memory: Limiter,
  remote: Limiter,
  steps: readonly Step[],
): Promise<void> {
  const seen = new Map<string, Seen>();
  for (const s of steps) {
    const client = seen.get(s.id) ?? { admitted: [] };
    seen.set(s.id, client);
    clock.now = nextNow(clock.now, s, client, memory.policies);
    const options = { cost: s.cost };
    const [m, r] = s.peek
      ? [await memory.peek(s.id, options), await remote.peek(s.id, options)]
      : [await memory.consume(s.id, options), await remote.consume(s.id, options)];
    assert.deepEqual(observable(r), observable(m));
    for (const figure of [m.remaining, m.resetMs, m.retryAfterMs ?? 0, ...m.policies.map((p) => p.resetMs)])
      assert.ok(Number.isSafeInteger(figure) && figure >= -1, `a whole figure, not ${figure}`);
    client.last = m;
    if (m.allowed && !s.peek && s.cost > 0) client.admitted.push(clock.now);
  }
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
    let played = 0;
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
        fc.asyncProperty(traces(), async ([policies, steps]) => {
          const scope = `diff-${run}-${++played}`;
          const memory = createLimiter({
            policy: policies,
            scope,
            store: new MemoryStore({ clock: clock.read, autoCleanup: false }),
          });
          const remote = createLimiter({ policy: policies, scope, store: redis });
          await replay(clock, memory, remote, steps);
        }),
        { numRuns },
      );
      assert.equal(redis.metrics.degradedAllowed + redis.metrics.degradedDenied, 0);
    });
  });
}
