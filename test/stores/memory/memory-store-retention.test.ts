// Retention follows the policy: no bucket is forgotten before it is at rest, and a store cap shorter than a policy
// needs is refused at wire-up. Memory pressure may still evict, but never a request's own buckets.
import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import {
  type AnyPolicy,
  createLimiter,
  fixedWindow,
  MemoryStore,
  slidingWindow,
  slidingWindowCounter,
  tokenBucket,
} from '../../../src/index.js';
import { manualStore, throwsConfig } from '../../harness/policy-helpers.js';

const MINUTE = 60_000;
const DAY = 86_400_000;

/** Long-lived state of every kind: each must outlive hours of idleness between requests. */
const LONG_POLICIES: Record<string, () => AnyPolicy> = {
  'fixed window of a day': () => fixedWindow({ limit: 5, windowMs: '1d' }),
  'sliding window of a day': () => slidingWindow({ limit: 5, windowMs: '1d' }),
  'sliding window counter of a day': () => slidingWindowCounter({ limit: 5, windowMs: '1d' }),
  'token bucket refilling 5 a day': () => tokenBucket({ capacity: 5, refillPerSecond: 5 / 86_400 }),
  'token bucket that never refills': () => tokenBucket({ capacity: 5, refillPerSecond: 0 }),
};

describe('MemoryStore keeps every bucket until its policy is at rest', () => {
  it('a daily limit of 5, one request a minute for 24 h with the sweep timer running: exactly 5', async () => {
    mock.timers.enable({ apis: ['setInterval'] });
    try {
      let now = 1_800_000_000_000;
      // The default sweep, every 10 minutes, on the store's default options.
      const store = new MemoryStore({ clock: () => now });
      const daily = createLimiter({ policy: fixedWindow({ limit: 5, windowMs: '1d' }), store });
      let admitted = 0;
      for (let minute = 0; minute < 24 * 60; minute++) {
        if ((await daily.consume('client')).allowed) admitted++;
        now += MINUTE;
        mock.timers.tick(MINUTE);
      }
      assert.equal(admitted, 5);
      // The next day's window opens at the first request after the last one closed.
      assert.equal((await daily.consume('client')).allowed, true);
      store.close();
    } finally {
      mock.timers.reset();
    }
  });

  for (const [label, make] of Object.entries(LONG_POLICIES)) {
    it(`${label}: sweeping between requests changes no decision`, async () => {
      let now = 0;
      const swept = new MemoryStore({ clock: () => now, autoCleanup: false });
      const kept = new MemoryStore({ clock: () => now, autoCleanup: false });
      const policy = make();
      const a = createLimiter({ policy, store: swept, scope: 'r' });
      const b = createLimiter({ policy, store: kept, scope: 'r' });
      // Bursts, then idle gaps of up to most of a day: the sweep runs after every step.
      const gaps = [0, 0, MINUTE, 3_600_000, 7 * 3_600_000, 20 * 3_600_000, MINUTE, 23 * 3_600_000];
      for (let round = 0; round < 3; round++) {
        for (const gap of gaps) {
          now += gap;
          swept.sweep();
          const [x, y] = [await a.consume('c', { cost: 2 }), await b.consume('c', { cost: 2 })];
          assert.deepEqual(x, y, `at ${now} ms`);
        }
      }
    });
  }

  it('the sweep still drops a bucket once it is at rest, and never one that never refills', async () => {
    let now = 0;
    const store = new MemoryStore({ clock: () => now, autoCleanup: false });
    const daily = createLimiter({ policy: fixedWindow({ limit: 5, windowMs: '1d' }), store });
    const lifetime = createLimiter({ policy: tokenBucket({ capacity: 2, refillPerSecond: 0 }), store });
    await daily.consume('c');
    await lifetime.consume('c');
    now = DAY - 1;
    assert.equal(store.sweep(), 0);
    now = DAY;
    assert.equal(store.sweep(), 1, 'the ended window');
    now = 1000 * DAY;
    assert.equal(store.sweep(), 0);
    assert.equal(
      (await lifetime.consume('c')).remaining,
      0,
      'one token spent a thousand days ago stays spent',
    );
  });
});

describe('a retention cap shorter than a policy needs is refused at wire-up', () => {
  it('MemoryStore inactiveAfterMs: refused when shorter, naming the cap and the policy; kept exact when long enough', async () => {
    const store = new MemoryStore({ inactiveAfterMs: '1h', autoCleanup: false });
    throwsConfig(
      () => createLimiter({ policy: fixedWindow({ limit: 5, windowMs: '1d', name: 'daily' }), store }),
      'inactiveAfterMs',
    );
    assert.throws(
      () => createLimiter({ policy: fixedWindow({ limit: 5, windowMs: '1d', name: 'daily' }), store }),
      /`inactiveAfterMs` must be at least 86400000 \(ms\) for policy "daily".*\(received 3600000\)/,
    );
    assert.throws(
      () => createLimiter({ policy: tokenBucket({ capacity: 1, refillPerSecond: 0, name: 'once' }), store }),
      /`inactiveAfterMs` cannot be set while policy "once" \(a token-bucket that never refills\)/,
    );
    // A sliding window counter's previous window weighs for a second window length.
    throwsConfig(
      () => createLimiter({ policy: slidingWindowCounter({ limit: 1, windowMs: '40m' }), store }),
      'inactiveAfterMs',
    );
    createLimiter({ policy: slidingWindowCounter({ limit: 1, windowMs: '30m' }), store });
    createLimiter({ policy: tokenBucket({ capacity: 60, refillPerSecond: 1 / 60 }), store });
  });

  it('MemoryStore maxBuckets below the policies of one limiter: refused at wire-up, not on every request', () => {
    const store = new MemoryStore({ maxBuckets: 1, autoCleanup: false });
    const two = [
      tokenBucket({ capacity: 3, refillPerSecond: 1, name: 'burst' }),
      fixedWindow({ limit: 9, windowMs: '1m', name: 'minute' }),
    ];
    throwsConfig(() => createLimiter({ policy: two, store }), 'maxBuckets');
    createLimiter({ policy: two, store: new MemoryStore({ maxBuckets: 2, autoCleanup: false }) });
  });
});

describe('MemoryStore under memory pressure', () => {
  it("never evicts a request's own new bucket to make room for its next one", async () => {
    let now = 0;
    const store = new MemoryStore({ clock: () => now, maxBuckets: 4, autoCleanup: false });
    const limiter = createLimiter({
      policy: [
        tokenBucket({ capacity: 3, refillPerSecond: 0, name: 'burst' }),
        fixedWindow({ limit: 100, windowMs: '1d', name: 'daily' }),
      ],
      store,
      scope: 'p',
    });
    const other = createLimiter({ policy: fixedWindow({ limit: 100, windowMs: '1d' }), store, scope: 'o' });
    // A full store: two buckets in another scope, and one busy client of this limiter.
    await other.consume('o1');
    await other.consume('o2');
    await limiter.consume('busy');
    let admitted = 0;
    for (let i = 0; i < 31; i++) {
      now += 10;
      // Everyone else stays busy, so each holds a second chance when the attacker's request makes room.
      for (const id of ['o1', 'o2']) await other.peek(id);
      await limiter.peek('busy');
      if ((await limiter.consume('attacker')).allowed) admitted++;
    }
    assert.equal(admitted, 3, 'a burst of 3 admits 3, however full the store is');
  });

  it('a limiter with as many policies as maxBuckets still works once the store is full', async () => {
    let now = 0;
    const store = new MemoryStore({ clock: () => now, maxBuckets: 2, autoCleanup: false });
    const limiter = createLimiter({
      policy: [
        tokenBucket({ capacity: 2, refillPerSecond: 0, name: 'a' }),
        tokenBucket({ capacity: 5, refillPerSecond: 0, name: 'b' }),
      ],
      store,
    });
    // Each new client makes room by evicting the other client's two buckets, never one of its own.
    for (const id of ['x', 'y', 'z', 'y', 'y']) {
      now += 1;
      await limiter.consume(id);
    }
    assert.equal(store.size, 2);
    const y = await limiter.consume('y');
    assert.equal(y.allowed, false, 'y has spent both tokens of a since it was last evicted');
    assert.deepEqual(
      y.policies.map((p) => p.remaining),
      [0, 3],
    );
  });
});

describe('clock and retention edge cases at the limiter level', () => {
  it('a clock stepping back, then a sweep, does not mint a fresh window', async () => {
    const { clock, store } = manualStore();
    const limiter = createLimiter({ policy: fixedWindow({ limit: 2, windowMs: 1000 }), store });
    clock.now = 1000;
    assert.equal((await limiter.consume('jo')).allowed, true);
    clock.now = 500;
    assert.equal((await limiter.consume('jo')).allowed, true);
    clock.now = 1500;
    store.sweep();
    assert.equal((await limiter.consume('jo')).allowed, false);
  });
});
