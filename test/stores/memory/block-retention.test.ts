// block(identifier, ms) against a store's retention cap: a block the store would forget before it ends is refused,
// since it would end early while its denials announce the whole of it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLimiter, fixedWindow, MemoryStore } from '../../../src/index.js';
import { RedisStore } from '../../../src/stores/redis/index.js';
import { pointed } from '../../harness/error-pointer.js';

const policy = () => fixedWindow({ limit: 5, windowMs: '1m' });

describe('block() beyond a retention cap', () => {
  it('is refused on a MemoryStore with inactiveAfterMs, naming the cap; one within it holds to its end', async () => {
    let now = 1_000_000;
    const store = new MemoryStore({ inactiveAfterMs: '1h', clock: () => now, autoCleanup: false });
    const limiter = createLimiter({ policy: policy(), store, blockMs: 0 });
    await assert.rejects(limiter.block('mallory', '2h'), {
      code: 'ERR_TOLLGATE_ARGUMENT',
      message: pointed(
        '`ms` (7200000) must not exceed how long the store keeps a block (`inactiveAfterMs`: 3600000 ms), or the block would end early',
        'ERR_TOLLGATE_ARGUMENT',
      ),
    });
    assert.equal((await limiter.consume('mallory')).allowed, true, 'the refused block locked nothing out');
    await limiter.block('mallory', '1h');
    now += 3_599_999;
    store.sweep();
    const last = await limiter.consume('mallory');
    assert.deepEqual([last.allowed, last.blocked, last.retryAfterMs], [false, true, 1]);
  });

  it('is refused on a RedisStore with maxTtlSeconds before any call to Redis', async () => {
    // Nothing listens there: a call would fail open, not reject.
    const store = new RedisStore({ url: 'redis://127.0.0.1:9', maxTtlSeconds: 3600, connectTimeoutMs: 100 });
    try {
      const limiter = createLimiter({ policy: policy(), store, blockMs: 0 });
      await assert.rejects(limiter.block('mallory', 3_600_001), {
        code: 'ERR_TOLLGATE_ARGUMENT',
        message: pointed(
          '`ms` (3600001) must not exceed how long the store keeps a block (`maxTtlSeconds`: 3600000 ms), or the block would end early',
          'ERR_TOLLGATE_ARGUMENT',
        ),
      });
    } finally {
      await store.close();
    }
  });

  it('is any length on a store that keeps buckets until they are at rest', async () => {
    const store = new MemoryStore({ clock: () => 1_000_000 });
    const limiter = createLimiter({ policy: policy(), store, blockMs: 0 });
    await limiter.block('mallory', '365d');
    assert.equal((await limiter.consume('mallory')).retryAfterMs, 365 * 86_400_000);
  });
});
