// MemoryStore on a hand-moved clock: its options, which bucket gives way under maxBuckets (more in
// memory-store-eviction.test.ts), reset, sweep (and its timer) and kinds.
import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import {
  type AnyPolicy,
  createLimiter,
  fixedWindow,
  MemoryStore,
  type MemoryStoreOptions,
  tokenBucket,
} from '../../../src/index.js';
import { pointed } from '../../harness/error-pointer.js';
import { limitOne, liveKeys, manualStore, throwsConfig } from '../../harness/policy-helpers.js';

/** One request a second passes; each bucket is at rest 1000 ms after its window opened. */
const perSecond = (name?: string) =>
  fixedWindow(name === undefined ? { limit: 1, windowMs: 1000 } : { limit: 1, windowMs: 1000, name });

describe('MemoryStore options', () => {
  it('MemoryStore rejects bad options, naming the option', () => {
    for (const maxBuckets of [0, -1, 1.5, Number.NaN])
      throwsConfig(() => new MemoryStore({ maxBuckets }), 'maxBuckets');
    throwsConfig(() => new MemoryStore({ cleanupIntervalMs: 0 }), 'cleanupIntervalMs');
    throwsConfig(() => new MemoryStore({ inactiveAfterMs: 'soon' as '1s' }), 'inactiveAfterMs');
    throwsConfig(() => new MemoryStore({ autoCleanup: 'no' as unknown as boolean }), 'autoCleanup');
    throwsConfig(() => new MemoryStore({ clock: 5 as unknown as () => number }), 'clock');
    throwsConfig(() => new MemoryStore({ maxClient: 5 } as never), 'maxClient');
  });

  it('refuses bad options with messages that say what is wrong', () => {
    assert.throws(() => new MemoryStore({ maxClient: 5 } as MemoryStoreOptions), {
      code: 'ERR_TOLLGATE_CONFIG',
      message: pointed(
        '`maxClient` is not an option of MemoryStore; did you mean `maxClients`? (renamed to `maxBuckets`)',
      ),
    });
    assert.throws(() => new MemoryStore({ maxClients: 5 } as MemoryStoreOptions), {
      code: 'ERR_TOLLGATE_CONFIG',
      option: 'maxClients',
      message: pointed('`maxClients` is not an option of MemoryStore (renamed to `maxBuckets`)'),
    });
    assert.throws(() => new MemoryStore({ cleanupIntervalMs: '25d' }), {
      code: 'ERR_TOLLGATE_CONFIG',
      option: 'cleanupIntervalMs',
      message: pointed(
        '`cleanupIntervalMs` must be at most 2147483647 ms (about 24.8 days) (received 2160000000)',
      ),
    });
    assert.throws(() => new MemoryStore({ autoCleanup: 'no' as unknown as boolean }), {
      code: 'ERR_TOLLGATE_CONFIG',
      message: pointed('`autoCleanup` must be a boolean (received "no")'),
    });
  });

  it('refuses a limiter with more policies than maxBuckets buckets', () => {
    const { store } = manualStore({ maxBuckets: 1 });
    assert.throws(() => createLimiter({ policy: [perSecond('a'), perSecond('b')], store }), {
      code: 'ERR_TOLLGATE_CONFIG',
      option: 'maxBuckets',
      message: pointed(
        '`maxBuckets` must be at least the number of policies of a limiter on this store (2) (received 1)',
      ),
    });
  });

  it('a direct request needing more buckets of one kind than maxBuckets is refused, naming maxBuckets', () => {
    const { store } = manualStore({ maxBuckets: 1 });
    const request = {
      scope: 's',
      id: 'x',
      policies: [perSecond('a'), perSecond('b')],
      cost: 1,
      action: 'consume' as const,
    };
    assert.throws(() => store.evaluate(request), {
      code: 'ERR_TOLLGATE_CONFIG',
      option: 'maxBuckets',
      message: pointed('`maxBuckets` is below the buckets one request needs (1)'),
    });
  });

  it('a direct request needing more buckets of several kinds than maxBuckets is refused, and the bound holds', () => {
    const { store } = manualStore({ maxBuckets: 2 });
    const request = {
      scope: 's',
      id: 'x',
      policies: [perSecond('a'), tokenBucket({ capacity: 5, refillPerSecond: 1, name: 'b' }), perSecond('c')],
      cost: 1,
      action: 'consume' as const,
    };
    assert.throws(() => store.evaluate(request), {
      code: 'ERR_TOLLGATE_CONFIG',
      option: 'maxBuckets',
      message: pointed('`maxBuckets` is below the buckets one request needs (2)'),
    });
    assert.equal(store.size, 2);
  });

  it('accepts inactiveAfterMs beside a bucket that holds nothing worth keeping (capacity 0)', () => {
    const { store } = manualStore({ inactiveAfterMs: 1 });
    const never = tokenBucket({ capacity: 0, refillPerSecond: 1 });
    assert.equal(never.retentionMs, 0);
    assert.ok(createLimiter({ policy: never, store }));
  });

  it('autoCleanup: false starts no sweep timer; true does', async () => {
    mock.timers.enable({ apis: ['setInterval'] });
    try {
      let now = 0;
      const manual = new MemoryStore({ clock: () => now, cleanupIntervalMs: 1000, autoCleanup: false });
      const timed = new MemoryStore({ clock: () => now, cleanupIntervalMs: 1000, autoCleanup: true });
      await createLimiter({ policy: perSecond(), store: manual }).consume('a');
      await createLimiter({ policy: perSecond(), store: timed }).consume('a');
      now = 5000;
      mock.timers.tick(5000);
      assert.equal(manual.size, 1);
      assert.equal(timed.size, 0);
      assert.equal(manual.sweep(), 1);
      manual.close();
      timed.close();
    } finally {
      mock.timers.reset();
    }
  });
});

describe('MemoryStore', () => {
  it('maxBuckets evicts the bucket nearest to rest, however recently it was used', async () => {
    const { clock, store } = manualStore({ maxBuckets: 3 });
    const limiter = createLimiter({ policy: limitOne(), store, scope: 'lru' });
    for (const id of ['a', 'b', 'c']) {
      await limiter.consume(id);
      clock.now += 1000;
    }
    // Reading 'a' (a denial, which writes nothing) does not keep it: its window ends first.
    assert.equal((await limiter.consume('a')).allowed, false);
    await limiter.consume('d');
    assert.equal(store.size, 3);
    assert.deepEqual(store.metrics.evictions, { 'at-rest': 0, live: 1, held: 0 });
    assert.deepEqual((await liveKeys(store)).sort(), ['lru|b', 'lru|c', 'lru|d']);
    // 'a' was forgotten: it starts afresh.
    assert.equal((await limiter.consume('a')).allowed, true);
  });

  it('a key used constantly is never the one evicted, even while it is only being denied', async () => {
    const { clock, store } = manualStore({ maxBuckets: 2 });
    // Buckets that never refill never rest: of those, a flood of new clients evicts its own newest first.
    const limiter = createLimiter({ policy: tokenBucket({ capacity: 5, refillPerSecond: 0 }), store });
    assert.equal((await limiter.consume('hot', { cost: 5 })).allowed, true);
    for (let i = 0; i < 1000; i++) {
      clock.now += 7;
      assert.equal((await limiter.consume('hot')).allowed, false, `iteration ${i}`);
      assert.equal((await limiter.consume(`cold-${i}`)).allowed, true);
    }
    assert.equal(store.size, 2);
    assert.deepEqual(store.metrics.evictions, { 'at-rest': 0, live: 999, held: 0 });
  });

  it('sweep() drops the buckets at rest and keeps the others', async () => {
    const { clock, store } = manualStore();
    const limiter = createLimiter({ policy: fixedWindow({ limit: 5, windowMs: 1000 }), store });
    await limiter.consume('a');
    clock.now = 500;
    await limiter.consume('b');
    clock.now = 999;
    assert.equal(store.sweep(), 0);
    clock.now = 1000;
    assert.equal((await liveKeys(store)).length, 1);
    assert.equal(store.sweep(), 1);
    assert.equal(store.size, 1);
    clock.now = 1500;
    assert.equal(store.sweep(), 1);
    assert.equal(store.size, 0);
  });

  it('the sweep timer runs every cleanupIntervalMs, and close() clears it and the buckets', async () => {
    mock.timers.enable({ apis: ['setInterval'] });
    try {
      let now = 0;
      const store = new MemoryStore({ clock: () => now, cleanupIntervalMs: 1000 });
      const limiter = createLimiter({ policy: fixedWindow({ limit: 1, windowMs: 100 }), store });
      await limiter.consume('a');
      now = 500;
      mock.timers.tick(999);
      assert.equal(store.size, 1);
      mock.timers.tick(1);
      assert.equal(store.size, 0);
      await limiter.consume('b');
      store.close();
      assert.equal(store.size, 0);
      await limiter.consume('c');
      now = 10_000;
      mock.timers.tick(10_000);
      assert.equal(store.size, 1, 'no sweep after close()');
    } finally {
      mock.timers.reset();
    }
  });

  it('the bound is shared by every scope: the bucket nearest to rest goes, whichever table holds it', async () => {
    const { clock, store } = manualStore({ maxBuckets: 4 });
    const big = createLimiter({ policy: limitOne(), store, scope: 'big' });
    const small = createLimiter({ policy: limitOne(), store, scope: 'small' });
    // 'big' holds the most, but 'small|z' is the nearest to rest of all.
    await small.consume('z');
    clock.now = 1000;
    for (const id of ['a', 'b', 'c']) await big.consume(id);
    await small.consume('y');
    assert.equal(store.size, 4);
    assert.deepEqual(store.metrics.evictions, { 'at-rest': 0, live: 1, held: 0 });
    assert.deepEqual((await liveKeys(store)).sort(), ['big|a', 'big|b', 'big|c', 'small|y']);
  });

  it('lists, resets and sweeps the buckets of a limiter with several policies by their own keys', async () => {
    const { clock, store } = manualStore();
    const policies = [
      fixedWindow({ limit: 1, windowMs: 1000, name: 'second' }),
      fixedWindow({ limit: 5, windowMs: 60_000, name: 'minute' }),
    ];
    const both = createLimiter({ policy: policies, store, scope: 'both' });
    const alone = createLimiter({ policy: limitOne(), store, scope: 'both' });
    await both.consume('ann');
    await both.consume('bob');
    await alone.consume('ann');
    assert.deepEqual((await liveKeys(store)).sort(), [
      'both|ann',
      '{both|ann}:minute',
      '{both|ann}:second',
      '{both|bob}:minute',
      '{both|bob}:second',
    ]);
    // A key of one policy resets that policy alone; foreign or malformed keys are ignored.
    store.reset(['{both|ann}:second', 'both|nobody', '{both|ann', '{both|ann}', 'unrelated']);
    assert.equal(store.size, 4);
    assert.equal(
      (await both.consume('ann')).allowed,
      true,
      'the second is spent afresh, the minute has 4 left',
    );
    assert.equal((await both.consume('ann')).policies[1]?.remaining, 3);
    await both.reset('bob');
    await alone.reset('ann');
    assert.deepEqual((await liveKeys(store)).sort(), ['{both|ann}:minute', '{both|ann}:second']);
    clock.now = 60_000;
    assert.equal(store.sweep(), 2);
    assert.equal(store.size, 0);
    assert.deepEqual(await liveKeys(store), []);
  });

  it("making room for one of a request's buckets never evicts another bucket of the same request", async () => {
    const { clock, store } = manualStore({ maxBuckets: 3 });
    const limiter = createLimiter({
      policy: [
        fixedWindow({ limit: 3, windowMs: 1000, name: 'a' }),
        fixedWindow({ limit: 100, windowMs: 60_000, name: 'b' }),
      ],
      store,
      scope: 's',
    });
    await limiter.consume('x');
    await limiter.consume('y');
    clock.now = 2000;
    store.sweep();
    await limiter.consume('y');
    // x's window 'a' is gone and must be inserted; its 'b' bucket, read by this request, must not make the room:
    // y's 'a' does, the nearest to rest of the others.
    assert.deepEqual(
      (await limiter.consume('x')).policies.map((p) => p.remaining),
      [2, 98],
    );
    assert.deepEqual(
      (await limiter.consume('x')).policies.map((p) => p.remaining),
      [1, 97],
    );
    assert.deepEqual((await liveKeys(store)).sort(), ['{s|x}:a', '{s|x}:b', '{s|y}:b']);
  });

  it('evictions of buckets at rest are counted apart from those that still held state', async () => {
    const { clock, store } = manualStore({ maxBuckets: 1 });
    const limiter = createLimiter({ policy: fixedWindow({ limit: 1, windowMs: 100 }), store });
    await limiter.consume('a');
    clock.now = 1000;
    await limiter.consume('b');
    assert.deepEqual(store.metrics.evictions, { 'at-rest': 1, live: 0, held: 0 });
    await limiter.consume('c');
    assert.deepEqual(store.metrics.evictions, { 'at-rest': 1, live: 1, held: 0 });
  });
});

describe('MemoryStore under maxBuckets', () => {
  it('holds more than 1024 buckets of one kind when maxBuckets allows, each with its own state', async () => {
    const { store } = manualStore({ maxBuckets: 1500 });
    const limiter = createLimiter({ policy: tokenBucket({ capacity: 2, refillPerSecond: 0 }), store });
    for (let i = 0; i < 1500; i++) await limiter.consume(`c${i}`);
    assert.equal(store.size, 1500);
    assert.deepEqual(store.metrics.evictions, { 'at-rest': 0, live: 0, held: 0 });
    // One of two tokens spent: a peek at cost 1 leaves none (a forgotten client would have one left).
    for (const i of [0, 1023, 1024, 1499]) assert.equal((await limiter.peek(`c${i}`)).remaining, 0, `c${i}`);
    await limiter.consume('one-more');
    assert.equal(store.size, 1500);
    assert.deepEqual(store.metrics.evictions, { 'at-rest': 0, live: 1, held: 0 });
  });

  it('of buckets at rest at the same instant, the newest goes (it has most likely counted the least)', async () => {
    const { store } = manualStore({ maxBuckets: 2 });
    const a = createLimiter({ policy: perSecond(), store, scope: 'a' });
    const b = createLimiter({ policy: perSecond(), store, scope: 'b' });
    const c = createLimiter({ policy: perSecond(), store, scope: 'c' });
    await a.consume('x');
    await b.consume('x');
    await c.consume('x');
    assert.deepEqual(await liveKeys(store), ['a|x', 'c|x']);
  });

  it('a scope the sweep emptied counts as new when it holds buckets again', async () => {
    const { clock, store } = manualStore({ maxBuckets: 2 });
    const a = createLimiter({ policy: perSecond(), store, scope: 'a' });
    const b = createLimiter({ policy: perSecond(), store, scope: 'b' });
    const c = createLimiter({ policy: perSecond(), store, scope: 'c' });
    await a.consume('x');
    clock.now = 500;
    await b.consume('x');
    clock.now = 1000;
    assert.equal(store.sweep(), 1);
    await a.consume('y');
    // 'a', whose table and scope the sweep dropped, is made anew; 'b|x' is the nearest to rest, and goes.
    await c.consume('x');
    assert.deepEqual(await liveKeys(store), ['a|y', 'c|x']);
  });

  it("a request's new bucket evicts one other, the nearest to rest that is not the request's own", async () => {
    const { clock, store } = manualStore({ maxBuckets: 3 });
    const both = createLimiter({
      policy: [fixedWindow({ limit: 5, windowMs: 60_000, name: 'minute' }), perSecond('second')],
      store,
      scope: 'a',
    });
    await both.consume('x');
    clock.now = 1000;
    // Drops x's 'second' bucket: x keeps one bucket, alone in the first table.
    assert.equal(store.sweep(), 1);
    await createLimiter({ policy: perSecond(), store, scope: 'b' }).consume('m');
    clock.now = 1500;
    await createLimiter({ policy: perSecond(), store, scope: 'c' }).consume('n');
    assert.deepEqual(
      (await both.consume('x')).policies.map((p) => p.remaining),
      [3, 0],
    );
    assert.deepEqual(store.metrics.evictions, { 'at-rest': 0, live: 1, held: 0 });
    assert.deepEqual(await liveKeys(store), ['{a|x}:minute', '{a|x}:second', 'c|n']);
  });

  it('a bucket whose rest falls exactly now is evicted as at rest', async () => {
    const { clock, store } = manualStore({ maxBuckets: 1 });
    const limiter = createLimiter({ policy: perSecond(), store });
    await limiter.consume('a');
    clock.now = 999;
    await limiter.consume('b');
    assert.deepEqual(store.metrics.evictions, { 'at-rest': 0, live: 1, held: 0 });
    clock.now = 1999;
    await limiter.consume('c');
    assert.deepEqual(store.metrics.evictions, { 'at-rest': 1, live: 1, held: 0 });
  });
});

describe('MemoryStore bookkeeping', () => {
  it('reset ignores keys of scopes, policies and identifiers it does not hold', async () => {
    const { store } = manualStore();
    const both = createLimiter({ policy: [perSecond('a'), perSecond('b')], store, scope: 'kept' });
    await both.consume('x');
    store.reset(['elsewhere|x', '{kept|x}:c', 'kept|x', '{kept|y}:a']);
    assert.equal(store.size, 2);
    store.reset(['{kept|x}:a']);
    assert.deepEqual(await liveKeys(store), ['{kept|x}:b']);
  });

  it('a state at rest as soon as written (ttlMs 0) is not listed and goes at the next sweep', async () => {
    const { store } = manualStore();
    const base = fixedWindow({ limit: 5, windowMs: 1000 });
    const restsAtOnce: AnyPolicy = {
      ...base,
      evaluate: (state, nowMs, cost) => ({ ...base.evaluate(state, nowMs, cost), ttlMs: 0 }),
    };
    store.evaluate({ scope: 's', id: 'x', policies: [restsAtOnce], cost: 1, action: 'consume' as const });
    assert.equal(store.size, 1);
    assert.deepEqual(await liveKeys(store), []);
    assert.equal(store.sweep(), 1);
    assert.equal(store.size, 0);
  });

  it("another kind's bucket under the same key: a peek leaves it, a consume replaces it", async () => {
    const { store } = manualStore();
    const window = createLimiter({
      policy: fixedWindow({ limit: 1, windowMs: '1m' }),
      store,
      scope: 'changed',
    });
    const bucket = createLimiter({
      policy: tokenBucket({ capacity: 1, refillPerSecond: 0 }),
      store,
      scope: 'changed',
    });
    await window.consume('x');
    assert.equal((await bucket.peek('x')).allowed, true);
    assert.equal(store.size, 1);
    assert.equal((await window.consume('x')).allowed, false, 'the window is still spent');
    assert.equal((await bucket.consume('x')).allowed, true);
    assert.equal(store.size, 1);
    assert.equal((await bucket.consume('x')).allowed, false, 'the bucket is spent');
    assert.equal(store.size, 1);
  });

  it("another kind's bucket, on the general path: a peek leaves it, a consume replaces it", () => {
    const { store } = manualStore();
    const window = fixedWindow({ limit: 1, windowMs: '1m' });
    const bucket = tokenBucket({ capacity: 1, refillPerSecond: 0 });
    // A lease takes the general path (evaluatePolicies), where a lone policy without one takes decideAlone.
    const ask = (policy: AnyPolicy, action: 'consume' | 'peek') =>
      store.evaluate({ scope: 'general', id: 'x', policies: [policy], cost: 1, action, lease: 'held' });
    assert.equal(ask(window, 'consume').allowed, true);
    assert.equal(ask(bucket, 'peek').allowed, true);
    assert.equal(ask(window, 'consume').allowed, false, 'the peek left the window as it was, spent');
    assert.equal(ask(bucket, 'consume').allowed, true, 'the window is replaced by a fresh bucket');
    assert.equal(store.size, 1);
    assert.equal(ask(bucket, 'consume').allowed, false, 'the bucket is spent');
    assert.equal(ask(window, 'peek').allowed, true, 'a window would be fresh');
    assert.equal(ask(bucket, 'consume').allowed, false, 'the peek left the bucket as it was, spent');
  });
});
