// MemoryStore's stats(): the figures the metrics exporters read at collection time, exactly.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { concurrency, createLimiter, MemoryStore, tokenBucket } from '../../src/index.js';

describe('MemoryStore.stats()', () => {
  it('reports its evictions by what they dropped, and nothing it does not keep', async () => {
    const clock = { now: 1_000_000 };
    const store = new MemoryStore({ maxBuckets: 1, clock: () => clock.now, autoCleanup: false });
    const evictions = (atRest: number, live: number, held: number) => ({
      evictions: { 'at-rest': atRest, live, held },
    });
    assert.deepEqual(store.stats(), evictions(0, 0, 0));
    const limiter = createLimiter({ policy: tokenBucket({ capacity: 2, refillPerSecond: 1 }), store });
    const leases = createLimiter({ policy: concurrency({ max: 1, leaseMs: '1m' }), store });
    await limiter.consume('a');
    await limiter.consume('b');
    assert.deepEqual(store.stats(), evictions(0, 1, 0));
    // A snapshot: later evictions do not change one already taken.
    const taken = store.stats();
    clock.now += 1000;
    await leases.consume('c');
    assert.deepEqual([taken, store.stats()], [evictions(0, 1, 0), evictions(1, 1, 0)]);
    await limiter.consume('d');
    assert.deepEqual(store.stats(), evictions(1, 1, 1));
  });
});
