// consumeSync and the memory store's path for a policy alone: the same decisions and keys as the general path.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type AnyPolicy,
  concurrency,
  createLimiter,
  fixedWindow,
  type MemoryStore,
  slidingWindow,
  slidingWindowCounter,
  TollgateError,
  tokenBucket,
} from '../../src/index.js';
import type { Store, StoreResponse } from '../../src/stores/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { liveKeys, manualStore } from '../harness/policy-helpers.js';

/** The same store seen through the contract alone: not a MemoryStore, nor synchronous, so the general path. */
function general(store: MemoryStore): Store {
  return { evaluate: (request) => store.evaluate(request), reset: (keys) => store.reset(keys) };
}

/** A small xorshift, so a failing trace is the same on every run. */
function random(seed: number) {
  let x = seed;
  return (n: number) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
}

const KINDS: Record<string, () => AnyPolicy> = {
  'token bucket': () => tokenBucket({ capacity: 3, refillPerSecond: 2 }),
  'token bucket that never refills': () => tokenBucket({ capacity: 3, refillPerSecond: 0 }),
  'fixed window': () => fixedWindow({ limit: 3, windowMs: 1000 }),
  'sliding window': () => slidingWindow({ limit: 3, windowMs: 1000 }),
  'sliding window counter': () => slidingWindowCounter({ limit: 3, windowMs: 1000 }),
};
// Plain ones are kept as they are, the others hashed: both kinds of stored identifier.
const IDENTIFIERS = ['a', 'b', '10.0.0.1', 'user {x}', '|'];

describe('a policy alone on a MemoryStore', () => {
  for (const [kind, make] of Object.entries(KINDS)) {
    it(`${kind}: decides and stores as the general path does, step by step`, async () => {
      const fast = manualStore();
      const slow = manualStore();
      const policy = make();
      const limiter = createLimiter({ policy, store: fast.store, scope: 'same' });
      const twin = createLimiter({ policy, store: general(slow.store), scope: 'same' });
      const next = random(0x5eed);
      for (let step = 0; step < 400; step++) {
        // Mostly forwards, sometimes backwards: a clock that went back must be read the same way too.
        const move = next(10) === 0 ? -next(400) : next(400);
        fast.clock.now = Math.max(0, fast.clock.now + move);
        slow.clock.now = fast.clock.now;
        const identifier = IDENTIFIERS[next(IDENTIFIERS.length)] as string;
        const cost = next(5);
        const peek = next(4) === 0;
        const want = await (peek ? twin.peek(identifier, { cost }) : twin.consume(identifier, { cost }));
        const got = peek
          ? await limiter.peek(identifier, { cost })
          : limiter.consumeSync(identifier, { cost });
        assert.deepEqual(got, want, `step ${step}`);
      }
      assert.equal(fast.store.size, slow.store.size);
    });
  }

  it('stores under the same keys as the general path', async () => {
    const fast = manualStore();
    const slow = manualStore();
    const policy = tokenBucket({ capacity: 3, refillPerSecond: 1 });
    const limiter = createLimiter({ policy, store: fast.store, scope: 'keys' });
    const twin = createLimiter({ policy, store: general(slow.store), scope: 'keys' });
    for (const identifier of IDENTIFIERS) {
      limiter.consumeSync(identifier);
      await twin.consume(identifier);
    }
    assert.deepEqual(await liveKeys(fast.store), await liveKeys(slow.store));
    assert.ok((await liveKeys(fast.store)).includes('keys|10.0.0.1'));
  });

  it("drops another kind's bucket under its key when it spends, and keeps it when it peeks", async () => {
    const { store } = manualStore();
    const before = createLimiter({
      policy: fixedWindow({ limit: 3, windowMs: 1000 }),
      store,
      scope: 'moved',
    });
    const after = createLimiter({
      policy: tokenBucket({ capacity: 3, refillPerSecond: 1 }),
      store,
      scope: 'moved',
    });
    before.consumeSync('a');
    before.consumeSync('a');
    assert.equal(after.consumeSync('a', { cost: 0 }).remaining, 3, "the other kind's state is not read");
    assert.equal(store.size, 0, 'a consume drops it, even of cost 0');
    before.consumeSync('a');
    assert.equal((await after.peek('a')).remaining, 2, 'a fresh bucket, one token spent by the peek');
    assert.equal(store.size, 1, 'a peek writes nothing, not even a removal');
    assert.equal(before.consumeSync('a').remaining, 1, 'so the fixed window still counts its own');
  });
});

describe('consumeSync', () => {
  const policy = tokenBucket({ capacity: 2, refillPerSecond: 1 });

  it('answers what consume would, without a promise', async () => {
    const one = manualStore();
    const two = manualStore();
    const sync = createLimiter({ policy, store: one.store, scope: 's' });
    const async = createLimiter({ policy, store: two.store, scope: 's' });
    for (let i = 0; i < 4; i++) assert.deepEqual(sync.consumeSync('a'), await async.consume('a'));
    assert.equal(sync.consumeSync('a').retryAfterMs, 1000);
  });

  it('throws what consume rejects with: an unusable identifier or cost', async () => {
    const limiter = createLimiter({ policy, store: manualStore().store, scope: 's' });
    const argument = { code: 'ERR_TOLLGATE_ARGUMENT' };
    assert.throws(() => limiter.consumeSync(''), argument);
    assert.throws(() => limiter.consumeSync('a', { cost: -1 }), argument);
    assert.throws(() => limiter.consumeSync('a', { cost: 1.5 }), argument);
    // consume itself never throws: the same failures are its rejections.
    const rejected = limiter.consume('');
    assert.ok(rejected instanceof Promise);
    await assert.rejects(rejected, argument);
    await assert.rejects(limiter.peek('a', { cost: -1 }), argument);
  });

  it('on a Redis store is a configuration error naming the store, before anything is asked of it', async () => {
    const store = new RedisStore({ url: 'redis://127.0.0.1:1' });
    const limiter = createLimiter({ policy, store, scope: 's' });
    assert.throws(
      () => limiter.consumeSync('a'),
      (error: unknown) => {
        assert.ok(error instanceof TollgateError);
        assert.equal(error.code, 'ERR_TOLLGATE_CONFIG');
        assert.equal(error.option, 'store');
        assert.match(error.message, /^`store` must answer synchronously for consumeSync\(\)/);
        return true;
      },
    );
    assert.deepEqual(store.stats().batches, 0, 'no call was made');
    await store.close();
  });

  it('on a store of its own that declares itself synchronous, takes the general path', () => {
    const asked: string[] = [];
    const answer: StoreResponse = {
      allowed: true,
      results: [{ allowed: true, remaining: 1, resetMs: 1000, retryAfterMs: 0 }],
      nowMs: 5000,
    };
    const store: Store = {
      synchronous: true,
      evaluate: (request) => {
        asked.push(`${request.action} ${request.scope}|${request.id} ${request.cost}`);
        return answer;
      },
      reset: () => {},
    };
    const limiter = createLimiter({ policy, store, scope: 'own' });
    assert.equal(limiter.consumeSync('a', { cost: 2 }).remaining, 1);
    assert.deepEqual(asked, ['consume own|a 2']);
  });

  it('refuses the answer of a store that declares itself synchronous and returns a promise', async () => {
    const store: Store = {
      synchronous: true,
      evaluate: async () => ({ allowed: true, results: [], nowMs: 0 }),
      reset: () => {},
    };
    const limiter = createLimiter({ policy, store, scope: 'liar' });
    assert.throws(() => limiter.consumeSync('a'), { code: 'ERR_TOLLGATE_STORE' });
    await assert.rejects(limiter.consume('a'), { code: 'ERR_TOLLGATE_STORE' });
  });

  it('takes and frees a concurrency slot as consume does', async () => {
    const { store } = manualStore();
    const limiter = createLimiter({
      policy: concurrency({ max: 1, leaseMs: 60_000 }),
      store,
      scope: 'slots',
    });
    const held = limiter.consumeSync('a');
    assert.equal(held.allowed, true);
    assert.equal(limiter.consumeSync('a').allowed, false, 'the one slot is held');
    await held.release?.();
    assert.equal(limiter.consumeSync('a').allowed, true, 'and free again once released');
  });

  it("keeps a lockout's block, across policies evaluated together", () => {
    const { store } = manualStore();
    const limiter = createLimiter({
      policy: [policy, fixedWindow({ limit: 5, windowMs: 1000, name: 'window' })],
      store,
      scope: 'locked',
      blockMs: 10_000,
    });
    limiter.consumeSync('a', { cost: 2 });
    const denied = limiter.consumeSync('a');
    assert.deepEqual([denied.allowed, denied.blocked, denied.retryAfterMs], [false, true, 10_000]);
    assert.deepEqual(
      denied.policies.map((p) => p.policy.name),
      ['token-bucket', 'window'],
    );
  });
});
