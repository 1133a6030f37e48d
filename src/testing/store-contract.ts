// One contract every store must pass (undici's cacheStoreTests, hono's runTest): a store is done when this is green.
import assert from 'node:assert/strict';
import { after, describe } from 'node:test';
import { HEADER_STYLES, rateLimitHeaders } from '../decision/headers.js';
import { createLimiter } from '../limiter/limiter.js';
import {
  type AnyPolicy,
  fixedWindow,
  slidingWindow,
  slidingWindowCounter,
  tokenBucket,
} from '../policies/index.js';
import type { Store } from '../stores/store.js';
import {
  figures,
  RATE_POLICIES,
  type RateCase,
  ratePolicy,
  register,
  registerRate,
  type StoreCase,
  type StoreFixture,
  storeContext,
} from './store-contract-context.js';
import { shapingContract } from './store-contract-shaping.js';
import { TestClock } from './test-clock.js';

export type { StoreFixture } from './store-contract-context.js';

/** Builds the store under test on `clock`, the contract's own, which it moves by hand: the store reads no other. */
export type MakeStore = (clock: () => number) => Promise<StoreFixture>;

export interface StoreContractOptions {
  /**
   * Its keys expire on their own, as RedisStore's do: the fixture gives `pttl`, and each key's TTL is checked to
   * outlast its state's time to rest (by at most RedisStore's padding).
   */
  readonly keyTtls?: boolean;
}

/** The keys a store holds for one scope. */
async function keysOf(store: Store, scope: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of store.keys?.() ?? []) if (key.startsWith(`${scope}|`)) keys.push(key);
  return keys;
}

/** Run on each rate policy: counting, costs, peeks, resets, rest and races. */
const RATE_CASES: Record<string, RateCase> = {
  'admits the limit, then denies with a retry that is exactly enough': async ({ clock, limiter }, make) => {
    const l = await limiter(make());
    for (let left = 4; left >= 0; left--) {
      const decision = await l.consume('client');
      assert.equal(decision.allowed, true);
      assert.equal(decision.remaining, left);
      assert.equal(decision.nowMs, clock.now);
    }
    const denied = await l.consume('client');
    assert.equal(denied.allowed, false);
    assert.equal(denied.remaining, 0);
    assert.ok(denied.retryAfterMs !== undefined && denied.retryAfterMs > 0);
    clock.now += denied.retryAfterMs - 1;
    assert.equal((await l.consume('client')).allowed, false, 'one millisecond early is still too early');
    clock.now += 1;
    assert.equal((await l.consume('client')).allowed, true, 'waiting retryAfterMs is enough');
  },

  'keeps identifiers apart, including ones that look like separators or hash tags': async (
    { limiter },
    make,
  ) => {
    const l = await limiter(make());
    const ids = ['a', 'a|b', '{a}', 'a}|{b', ' a', 'ü'.repeat(3), 'x'.repeat(10_000), '~a'];
    for (const id of ids) assert.equal((await l.consume(id, { cost: 5 })).allowed, true, id);
    for (const id of ids) assert.equal((await l.consume(id)).allowed, false, id);
  },

  'spends weighted costs and denies a cost above the limit forever': async ({ limiter }, make) => {
    const l = await limiter(make());
    assert.equal((await l.consume('w', { cost: 3 })).remaining, 2);
    const tooMuch = await l.consume('w', { cost: 6 });
    assert.equal(tooMuch.allowed, false);
    assert.equal(tooMuch.retryAfterMs, undefined, 'no wait admits a cost above the limit');
    assert.equal((await l.consume('w', { cost: 2 })).remaining, 0);
  },

  'peeks without spending and resets': async ({ limiter }, make) => {
    const l = await limiter(make());
    await l.consume('p', { cost: 2 });
    const peeked = await l.peek('p');
    assert.equal(peeked.remaining, 2);
    assert.equal((await l.peek('p')).remaining, 2);
    await l.reset('p');
    assert.equal((await l.consume('p')).remaining, 4);
  },

  'spending nothing writes nothing and reports a client at rest': async ({ clock, limiter, store }, make) => {
    const l = await limiter(make());
    for (const decision of [await l.peek('idle', { cost: 0 }), await l.consume('idle', { cost: 0 })]) {
      assert.deepEqual(figures(decision), {
        allowed: true,
        remaining: 5,
        resetMs: 0,
        retryAfterMs: undefined,
      });
    }
    assert.deepEqual(await keysOf(await store(), l.scope), [], 'no key for a cost of 0');
    const first = await l.consume('idle');
    assert.equal(first.remaining, 4);
    assert.ok(first.resetMs > 0);
    // Nor does it move a live state: the next decision is the one it would have been.
    clock.now += 100;
    const [peeked, spent] = [await l.peek('idle'), await l.consume('idle', { cost: 0 })];
    assert.deepEqual(figures(await l.peek('idle')), figures(peeked));
    assert.equal(spent.remaining, 4);
  },

  'a cost above the limit on an empty client: denied for good, with whole figures and no write': async (
    { limiter, store },
    make,
  ) => {
    const l = await limiter(make());
    const denied = await l.consume('greedy', { cost: 6 });
    assert.deepEqual(figures(denied), {
      allowed: false,
      remaining: 5,
      resetMs: 0,
      retryAfterMs: undefined,
    });
    assert.deepEqual(await keysOf(await store(), l.scope), []);
    for (const style of HEADER_STYLES) {
      const options = { legacyHeaders: true, legacyReset: 'epoch-seconds', key: 'greedy' } as const;
      const headers = Object.values(rateLimitHeaders(denied, style, options)).join(' ');
      assert.doesNotMatch(headers, /NaN|undefined|(^|[ =])-\d/, style);
    }
  },

  'once its state has come to rest, a peek reports a full quota and nothing to reset': async (
    { clock, limiter },
    make,
  ) => {
    const l = await limiter(make());
    await l.consume('rested', { cost: 3 });
    clock.now += 2 * 10_000 + 1;
    assert.deepEqual(figures(await l.peek('rested')), figures(await l.peek('never-seen')));
    assert.deepEqual(figures(await l.peek('rested', { cost: 0 })), {
      allowed: true,
      remaining: 5,
      resetMs: 0,
      retryAfterMs: undefined,
    });
  },

  'never admits more than the limit under concurrent requests': async ({ limiter }, make) => {
    const l = await limiter(make());
    const decisions = await Promise.all(Array.from({ length: 40 }, () => l.consume('hot')));
    assert.equal(decisions.filter((d) => d.allowed).length, 5);
  },
};

/** Run once: several policies at once, a scope whose policy changes kind, scopes kept apart. */
const CASES: Record<string, StoreCase> = {
  'evaluates several policies all or nothing': async ({ clock, limiter }) => {
    const l = await limiter([
      tokenBucket({ capacity: 3, refillPerSecond: 1, name: 'burst' }),
      fixedWindow({ limit: 4, windowMs: '1m', name: 'minute' }),
    ]);
    for (let i = 0; i < 3; i++) assert.equal((await l.consume('m')).allowed, true);
    const denied = await l.consume('m');
    assert.equal(denied.allowed, false);
    const minute = denied.policies.find((p) => p.policy.name === 'minute');
    assert.equal(minute?.remaining, 1, 'the denial spent nothing from the minute window');
    clock.now += 1000;
    assert.equal((await l.consume('m')).allowed, true);
    const second = await l.consume('m');
    assert.equal(second.allowed, false);
    assert.equal(second.policies.find((p) => p.policy.name === 'minute')?.remaining, 0);
  },

  "reads another kind's bucket as absent when a scope's policy changes kind": async ({
    store,
    scope: newScope,
  }) => {
    for (const [fromLabel, from] of Object.entries(RATE_POLICIES)) {
      for (const [toLabel, to] of Object.entries(RATE_POLICIES)) {
        if (from === to) continue;
        const scope = newScope();
        const before = createLimiter({ policy: from(), store: await store(), scope });
        for (let i = 0; i < 5; i++) await before.consume('client');
        const later = createLimiter({ policy: to(), store: await store(), scope });
        const decision = await later.consume('client');
        assert.deepEqual(
          [decision.allowed, decision.remaining, decision.degraded],
          [true, 4, undefined],
          `${fromLabel}, then ${toLabel}`,
        );
      }
    }
  },

  "a peek reads another kind's bucket as absent and leaves it in place": async ({
    store,
    scope: newScope,
  }) => {
    const scope = newScope();
    const owner = createLimiter({ policy: ratePolicy('fixed window'), store: await store(), scope });
    await owner.consume('client', { cost: 3 });
    const other = createLimiter({ policy: ratePolicy('token bucket'), store: await store(), scope });
    assert.equal((await other.peek('client')).remaining, 4, 'read as a fresh client');
    assert.equal((await owner.consume('client')).remaining, 1, 'the peek wrote nothing, not even a removal');
  },

  'keeps scopes apart': async ({ limiter }) => {
    const a = await limiter(tokenBucket({ capacity: 1, refillPerSecond: 1 }));
    const b = await limiter(tokenBucket({ capacity: 1, refillPerSecond: 1 }));
    assert.equal((await a.consume('same')).allowed, true);
    assert.equal((await b.consume('same')).allowed, true);
    assert.equal((await a.consume('same')).allowed, false);
  },
};

/** For a store whose keys expire on their own: a key is kept until its state is at rest, and no longer. */
const KEY_TTL_CASES: Record<string, StoreCase> = {
  'keeps a key until its state is at rest, however long: 30-day windows, and for ever without refill':
    async ({ fixture, limiter }) => {
      const { pttl } = await fixture();
      assert.ok(pttl !== undefined, 'a store with key TTLs gives the fixture pttl()');
      const month = 30 * 86_400_000;
      const cases: [AnyPolicy, number][] = [
        [fixedWindow({ limit: 5, windowMs: '30d' }), month],
        [slidingWindow({ limit: 5, windowMs: '30d' }), month],
        // The previous window's count weighs until the current one ends.
        [slidingWindowCounter({ limit: 5, windowMs: '30d' }), 2 * month],
        [tokenBucket({ capacity: 5, refillPerSecond: 5 / (month / 1000) }), month],
        [tokenBucket({ capacity: 5, refillPerSecond: 0 }), -1],
      ];
      for (const [policy, restMs] of cases) {
        const l = await limiter(policy);
        assert.equal((await l.consume('long', { cost: 5 })).allowed, true);
        const ttl = await pttl(`${l.scope}|long`);
        if (restMs < 0) assert.equal(ttl, -1, `${policy.kind}: a state that never rests has no TTL`);
        else
          assert.ok(
            // RedisStore's default padding, and up to the quantum a key's expiry is rounded to (an eighth of it).
            ttl > restMs && ttl <= restMs + 60_000 + 7500,
            `${policy.kind}: TTL ${ttl} ms for a rest of ${restMs} ms`,
          );
      }
    },
};

/**
 * Registers the store contract's tests with node:test, under `store contract: <name>`: call it at the top level of
 * a test file (or in a `describe`). The store is made once, on the first test, and closed after the last.
 *
 * @example
 * // map-store.test.ts, run with `node --test`: the store reads the contract's clock and no other.
 * runStoreContract('MapStore', async (clock) => {
 *   const store = new MapStore({ clock });
 *   return { store, close: async () => {} };
 * });
 */
export function runStoreContract(
  name: string,
  makeStore: MakeStore,
  { keyTtls = false }: StoreContractOptions = {},
): void {
  describe(`store contract: ${name}`, () => {
    const clock = new TestClock();
    const context = storeContext(clock, () => makeStore(clock.read));
    after(() => context.close());
    shapingContract(context);
    for (const [label, make] of Object.entries(RATE_POLICIES))
      describe(label, () => registerRate(RATE_CASES, context, make));
    register(CASES, context);
    // MemoryStore keeps no TTLs: its own retention tests hold its sweep to the same rule.
    if (keyTtls) register(KEY_TTL_CASES, context);
  });
}
