// MemoryStore at maxBuckets, filled by real traffic through limiters: buckets at rest go first, then the live bucket
// nearest to rest, and buckets holding a promise (a lease, a block, a booked wait) last; each eviction counted by the
// state it dropped.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  concurrency,
  createLimiter,
  fixedWindow,
  type Limiter,
  MemoryStore,
  tokenBucket,
} from '../../../src/index.js';
import { liveKeys, manualStore } from '../../harness/policy-helpers.js';

/** Ten tokens, one back each second: a bucket that spent `n` tokens is at rest `n` seconds later. */
const tenPerTenSeconds = () => tokenBucket({ capacity: 10, refillPerSecond: 1 });

/** Spends `n` tokens now (the bucket then owes them for `n` seconds). */
function spend(limiter: Limiter, id: string, n: number): void {
  assert.equal(limiter.consumeSync(id, { cost: n }).allowed, true, `${id} spends ${n}`);
}

/** The tokens `id` holds now, all ten of a full bucket or what a peek at ten finds short of them. */
async function tokensOf(limiter: Limiter, id: string): Promise<number> {
  const decision = await limiter.peek(id, { cost: 10 });
  return decision.allowed ? 10 : decision.remaining;
}

/** A wait booked on a spent bucket, then abandoned while it sleeps: its booking stays (a place in line is kept). */
async function bookAndLeave(limiter: Limiter, identifier: string): Promise<void> {
  const abort = new AbortController();
  const waiting = limiter.wait(identifier, { signal: abort.signal });
  // The booking is made before the wait sleeps.
  await new Promise((resolve) => setImmediate(resolve));
  abort.abort();
  await assert.rejects(waiting, { name: 'AbortError' });
}

describe('MemoryStore eviction order', () => {
  it('evicts a bucket at rest before a spent one, however old the spent one is (maxBuckets 1,000)', () => {
    const { clock, store } = manualStore({ maxBuckets: 1000 });
    const limiter = createLimiter({ policy: tenPerTenSeconds(), store, scope: 'tb' });
    spend(limiter, 'spent', 8);
    for (let i = 0; i < 999; i++) spend(limiter, `c${i}`, 1);
    // A second on, the 999 are full again (at rest); 'spent' still owes 7 tokens: it holds 3.
    clock.now = 1000;
    spend(limiter, 'newcomer', 1);
    assert.equal(store.size, 1000);
    assert.equal(limiter.consumeSync('spent', { cost: 4 }).allowed, false, 'spent holds 3 tokens, not 10');
    assert.equal(limiter.consumeSync('spent', { cost: 4 }).remaining, 3);
    assert.deepEqual(store.stats().evictions, { 'at-rest': 1, live: 0, held: 0 });
  });

  it('with the default maxBuckets, a client holding both its slots keeps them through 100,000 finished requests', async () => {
    // The default bound (100,000): one client's two leases, then 100,000 clients each take a slot and release it.
    const store = new MemoryStore({ clock: () => 0, autoCleanup: false });
    const limiter = createLimiter({ policy: concurrency({ max: 2, leaseMs: '2m' }), store, scope: 'c' });
    assert.equal((await limiter.consume('holder')).allowed, true);
    assert.equal((await limiter.consume('holder')).allowed, true);
    for (let i = 0; i < 100_000; i++) {
      const decision = await limiter.consume(`c${i}`);
      await decision.release?.();
    }
    assert.equal(store.size, 100_000);
    assert.equal((await limiter.consume('holder')).allowed, false, 'no third slot');
    assert.deepEqual(store.stats().evictions, { 'at-rest': 1, live: 0, held: 0 });
  });

  it('of buckets at rest at the same instant, a flood of new clients evicts its own, not a client at its limit', () => {
    // A burst within one millisecond: every window opened in it ends at the same instant.
    const { store } = manualStore({ maxBuckets: 100 });
    const limiter = createLimiter({ policy: fixedWindow({ limit: 5, windowMs: '1m' }), store, scope: 'fw' });
    spend(limiter, 'hammer', 5);
    for (let i = 0; i < 1000; i++) {
      assert.equal(limiter.consumeSync('hammer').allowed, false, `hammer is still spent (${i})`);
      spend(limiter, `flood-${i}`, 1);
    }
    assert.deepEqual(store.stats().evictions, { 'at-rest': 0, live: 901, held: 0 });
  });

  it('with no bucket at rest, evicts the live bucket nearest to rest, in whatever table it is', async () => {
    const { store } = manualStore({ maxBuckets: 4 });
    const big = createLimiter({ policy: tenPerTenSeconds(), store, scope: 'big' });
    const small = createLimiter({ policy: tenPerTenSeconds(), store, scope: 'small' });
    spend(big, 'far', 6);
    spend(big, 'farther', 9);
    spend(small, 'near', 2);
    spend(big, 'mid', 4);
    spend(big, 'newcomer', 5);
    const tokens = [];
    for (const id of ['far', 'farther', 'mid', 'newcomer']) tokens.push(await tokensOf(big, id));
    assert.deepEqual(tokens, [4, 1, 6, 5]);
    // 'near' owed the least (2 tokens, 2 s): forgetting it handed back only those.
    assert.equal(await tokensOf(small, 'near'), 10);
    assert.deepEqual(store.stats().evictions, { 'at-rest': 0, live: 1, held: 0 });
  });

  it('evicts buckets holding a lease, a block or a booked wait last, the nearest to the end of its hold first', async () => {
    const { clock, store } = manualStore({ maxBuckets: 5 });
    clock.now = 1_000_000;
    const leases = createLimiter({ policy: concurrency({ max: 1, leaseMs: '60s' }), store, scope: 'lease' });
    const blocks = createLimiter({
      policy: fixedWindow({ limit: 5, windowMs: '1m' }),
      store,
      scope: 'block',
      blockMs: '1s',
    });
    const booking = createLimiter({
      policy: tokenBucket({ capacity: 1, refillPerSecond: 0.1 }),
      store,
      scope: 'book',
    });
    const daily = createLimiter({ policy: fixedWindow({ limit: 5, windowMs: '1d' }), store, scope: 'daily' });
    // Held: a lease until +60 s, a block until +30 s, a wait booked beyond a full bucket until +10 s.
    assert.equal((await leases.consume('lessee')).allowed, true);
    await blocks.block('blocked', '30s');
    assert.equal((await booking.consume('booked')).allowed, true);
    // The bucket now owes two tokens, one more than it holds.
    await bookAndLeave(booking, 'booked');
    // Live, and at rest only in a day: still evicted before any of the held.
    await daily.consume('spender');
    assert.equal(store.size, 4);
    // A newcomer with four policies needs four buckets: its own are never evicted for its others.
    const newcomer = createLimiter({
      policy: ['a', 'b', 'c', 'd'].map((name) => fixedWindow({ limit: 1, windowMs: '1m', name })),
      store,
      scope: 'new',
    });
    assert.equal((await newcomer.consume('n')).allowed, true);
    assert.deepEqual((await liveKeys(store)).sort(), [
      'lease|lessee',
      '{new|n}:a',
      '{new|n}:b',
      '{new|n}:c',
      '{new|n}:d',
    ]);
    assert.equal((await leases.consume('lessee')).allowed, false, 'the lease is still held');
    assert.deepEqual(store.stats().evictions, { 'at-rest': 0, live: 1, held: 2 });
  });

  it('a hold that has ended is live again: evicted before a hold still running', async () => {
    const { clock, store } = manualStore({ maxBuckets: 2 });
    const leases = createLimiter({ policy: concurrency({ max: 1, leaseMs: '10s' }), store, scope: 'lease' });
    const booking = createLimiter({
      policy: tokenBucket({ capacity: 1, refillPerSecond: 1 }),
      store,
      scope: 'book',
    });
    assert.equal((await leases.consume('lessee')).allowed, true);
    assert.equal((await booking.consume('booked')).allowed, true);
    await bookAndLeave(booking, 'booked');
    // The booking is held for 1 s, then owes one token for 1 s more; the lease is held for 10 s.
    clock.now = 1500;
    assert.equal((await booking.consume('newcomer')).allowed, true);
    assert.deepEqual((await liveKeys(store)).sort(), ['book|newcomer', 'lease|lessee']);
    assert.deepEqual(store.stats().evictions, { 'at-rest': 0, live: 1, held: 0 });
  });

  it("never evicts a request's own bucket for its next, even the nearest to rest: the next nearest goes", async () => {
    const { store } = manualStore({ maxBuckets: 4 });
    const both = createLimiter({
      policy: [
        fixedWindow({ limit: 5, windowMs: '1s', name: 'a' }),
        fixedWindow({ limit: 5, windowMs: '10s', name: 'b' }),
      ],
      store,
      scope: 's',
    });
    const big = createLimiter({ policy: fixedWindow({ limit: 5, windowMs: '1m' }), store, scope: 'big' });
    const mid = createLimiter({ policy: fixedWindow({ limit: 5, windowMs: '30s' }), store, scope: 'mid' });
    both.consumeSync('x');
    store.reset(['{s|x}:a']);
    big.consumeSync('u');
    big.consumeSync('v');
    mid.consumeSync('z');
    // x's 'b' (at rest in 10 s) is the nearest to rest, but this request's own: 'mid|z' (30 s) makes the room.
    assert.deepEqual(
      both.consumeSync('x').policies.map((p) => p.remaining),
      [4, 3],
    );
    assert.deepEqual((await liveKeys(store)).sort(), ['big|u', 'big|v', '{s|x}:a', '{s|x}:b']);
    assert.deepEqual(store.stats().evictions, { 'at-rest': 0, live: 1, held: 0 });
  });
});

describe('MemoryStore bookkeeping under eviction', () => {
  it('keys() and the sweep see exactly the buckets eviction left, and later evictions still go by rest', async () => {
    const { clock, store } = manualStore({ maxBuckets: 3 });
    const limiter = createLimiter({ policy: tenPerTenSeconds(), store, scope: 'tb' });
    spend(limiter, 'a', 5);
    spend(limiter, 'b', 2);
    spend(limiter, 'c', 8);
    // 'b' is the nearest to rest: it makes room for 'd'.
    spend(limiter, 'd', 3);
    assert.deepEqual((await liveKeys(store)).sort(), ['tb|a', 'tb|c', 'tb|d']);
    clock.now = 3000;
    assert.deepEqual((await liveKeys(store)).sort(), ['tb|a', 'tb|c'], "'d' is at rest");
    assert.equal(store.sweep(), 1);
    assert.equal(store.size, 2);
    spend(limiter, 'e', 9);
    // Full again: of 'a' (at rest at 5 s), 'c' (8 s) and 'e' (12 s), 'a' goes.
    spend(limiter, 'f', 1);
    assert.deepEqual((await liveKeys(store)).sort(), ['tb|c', 'tb|e', 'tb|f']);
    assert.deepEqual(store.stats().evictions, { 'at-rest': 0, live: 2, held: 0 });
    clock.now = 5000;
    // 'f' (at rest at 4 s) goes before any live bucket, counted apart.
    spend(limiter, 'g', 1);
    assert.deepEqual((await liveKeys(store)).sort(), ['tb|c', 'tb|e', 'tb|g']);
    assert.deepEqual(store.stats().evictions, { 'at-rest': 1, live: 2, held: 0 });
    clock.now = 20_000;
    assert.equal(store.sweep(), 3);
    assert.equal(store.size, 0);
    assert.deepEqual(await liveKeys(store), []);
  });
});
