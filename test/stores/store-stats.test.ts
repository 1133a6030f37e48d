// MemoryStore's stats(): the figures the metrics exporters read at collection time, exactly.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLimiter, MemoryStore, tokenBucket } from '../../src/index.js';

describe('MemoryStore.stats()', () => {
  it('reports its evictions, and nothing it does not keep', async () => {
    const clock = { now: 1_000_000 };
    const store = new MemoryStore({ maxBuckets: 1, clock: () => clock.now, autoCleanup: false });
    assert.deepEqual(store.stats(), { evictions: 0 });
    const limiter = createLimiter({ policy: tokenBucket({ capacity: 2, refillPerSecond: 1 }), store });
    await limiter.consume('a');
    await limiter.consume('b');
    assert.deepEqual(store.stats(), { evictions: 1 });
    // A snapshot: later evictions do not change one already taken.
    const taken = store.stats();
    await limiter.consume('c');
    assert.deepEqual([taken, store.stats()], [{ evictions: 1 }, { evictions: 2 }]);
  });
});
