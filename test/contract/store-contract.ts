// One contract every store must pass (undici's cacheStoreTests, hono's runTest): a store is done when this is green.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { HEADER_STYLES } from '../../src/decision/headers.js';
import {
  type AnyPolicy,
  createLimiter,
  type Decision,
  fixedWindow,
  type Limiter,
  rateLimitHeaders,
  type Store,
  slidingWindow,
  slidingWindowCounter,
  tokenBucket,
} from '../../src/index.js';
import { RATE_POLICIES, shapingContract } from './store-contract-shaping.js';

export interface StoreFixture {
  readonly store: Store;
  close(): Promise<void>;
  /** For stores whose keys expire on their own: a bucket key's TTL in ms (-1: none), as the server reports it. */
  pttl?(key: string): Promise<number>;
}

/** A settable clock that every store under test reads instead of its own. */
export class TestClock {
  now = 1_800_000_000_000;
  readonly read = (): number => this.now;
}

let scopes = 0;

/** What a client is told, without the per-policy detail. */
function figures({ allowed, remaining, resetMs, retryAfterMs }: Decision) {
  return { allowed, remaining, resetMs, retryAfterMs };
}

/** The keys a store holds for one scope. */
async function keysOf(store: Store, scope: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of store.keys?.() ?? []) if (key.startsWith(`${scope}|`)) keys.push(key);
  return keys;
}
const uniqueScope = () => `contract-${process.pid}-${++scopes}`;

export function runStoreContract(
  name: string,
  makeStore: (clock: () => number) => Promise<StoreFixture>,
  /** Its keys expire on their own (Redis): the fixture gives `pttl`, and their TTLs are checked too. */
  { keyTtls = false }: { keyTtls?: boolean } = {},
): void {
  describe(`store contract: ${name}`, () => {
    const clock = new TestClock();
    let fixture: StoreFixture | undefined;
    const store = async () => {
      fixture ??= await makeStore(clock.read);
      return fixture.store;
    };
    const limiter = async (policy: AnyPolicy | AnyPolicy[]): Promise<Limiter> =>
      createLimiter({ policy, store: await store(), scope: uniqueScope() });
    after(async () => fixture?.close());
    shapingContract(store, clock);

    for (const [label, make] of Object.entries(RATE_POLICIES)) {
      describe(label, () => {
        it('admits the limit, then denies with a retry that is exactly enough', async () => {
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
          assert.equal(
            (await l.consume('client')).allowed,
            false,
            'one millisecond early is still too early',
          );
          clock.now += 1;
          assert.equal((await l.consume('client')).allowed, true, 'waiting retryAfterMs is enough');
        });

        it('keeps identifiers apart, including ones that look like separators or hash tags', async () => {
          const l = await limiter(make());
          const ids = ['a', 'a|b', '{a}', 'a}|{b', ' a', 'ü'.repeat(3), 'x'.repeat(10_000), '~a'];
          for (const id of ids) assert.equal((await l.consume(id, { cost: 5 })).allowed, true, id);
          for (const id of ids) assert.equal((await l.consume(id)).allowed, false, id);
        });

        it('spends weighted costs and denies a cost above the limit forever', async () => {
          const l = await limiter(make());
          assert.equal((await l.consume('w', { cost: 3 })).remaining, 2);
          const tooMuch = await l.consume('w', { cost: 6 });
          assert.equal(tooMuch.allowed, false);
          assert.equal(tooMuch.retryAfterMs, undefined, 'no wait admits a cost above the limit');
          assert.equal((await l.consume('w', { cost: 2 })).remaining, 0);
        });

        it('peeks without spending and resets', async () => {
          const l = await limiter(make());
          await l.consume('p', { cost: 2 });
          const peeked = await l.peek('p');
          assert.equal(peeked.remaining, 2);
          assert.equal((await l.peek('p')).remaining, 2);
          await l.reset('p');
          assert.equal((await l.consume('p')).remaining, 4);
        });

        it('spending nothing writes nothing and reports a client at rest', async () => {
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
        });

        it('a cost above the limit on an empty client: denied for good, with whole figures and no write', async () => {
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
        });

        it('once its state has come to rest, a peek reports a full quota and nothing to reset', async () => {
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
        });

        it('never admits more than the limit under concurrent requests', async () => {
          const l = await limiter(make());
          const decisions = await Promise.all(Array.from({ length: 40 }, () => l.consume('hot')));
          assert.equal(decisions.filter((d) => d.allowed).length, 5);
        });
      });
    }

    it('evaluates several policies all or nothing', async () => {
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
    });

    it("reads another kind's bucket as absent when a scope's policy changes kind", async () => {
      for (const [fromLabel, from] of Object.entries(RATE_POLICIES)) {
        for (const [toLabel, to] of Object.entries(RATE_POLICIES)) {
          if (from === to) continue;
          const scope = uniqueScope();
          const before = createLimiter({ policy: from(), store: await store(), scope });
          for (let i = 0; i < 5; i++) await before.consume('client');
          const after = createLimiter({ policy: to(), store: await store(), scope });
          const decision = await after.consume('client');
          assert.deepEqual(
            [decision.allowed, decision.remaining, decision.degraded],
            [true, 4, undefined],
            `${fromLabel}, then ${toLabel}`,
          );
        }
      }
    });

    it("a peek reads another kind's bucket as absent and leaves it in place", async () => {
      const scope = uniqueScope();
      const [fixed, bucket] = [RATE_POLICIES['fixed window'], RATE_POLICIES['token bucket']] as [
        () => AnyPolicy,
        () => AnyPolicy,
      ];
      const owner = createLimiter({ policy: fixed(), store: await store(), scope });
      await owner.consume('client', { cost: 3 });
      const other = createLimiter({ policy: bucket(), store: await store(), scope });
      assert.equal((await other.peek('client')).remaining, 4, 'read as a fresh client');
      assert.equal(
        (await owner.consume('client')).remaining,
        1,
        'the peek wrote nothing, not even a removal',
      );
    });

    // MemoryStore keeps no TTLs: test/stores/memory-store-retention.test.ts holds its sweep to the same rule.
    if (keyTtls)
      it('keeps a key until its state is at rest, however long: 30-day windows, and for ever without refill', async () => {
        await store();
        const pttl = fixture?.pttl;
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
              // The default padding, and up to the quantum a key's expiry is rounded to (an eighth of it).
              ttl > restMs && ttl <= restMs + 60_000 + 7500,
              `${policy.kind}: TTL ${ttl} ms for a rest of ${restMs} ms`,
            );
        }
      });

    it('keeps scopes apart', async () => {
      const a = await limiter(tokenBucket({ capacity: 1, refillPerSecond: 1 }));
      const b = await limiter(tokenBucket({ capacity: 1, refillPerSecond: 1 }));
      assert.equal((await a.consume('same')).allowed, true);
      assert.equal((await b.consume('same')).allowed, true);
      assert.equal((await a.consume('same')).allowed, false);
    });
  });
}
