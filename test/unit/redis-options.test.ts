// RedisStore's options are checked at construction, and its retention cap against each limiter at wire-up.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLimiter, fixedWindow, slidingWindowCounter, tokenBucket } from '../../src/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { throwsConfig } from '../policies/helpers.js';

describe('RedisStore maxTtlSeconds', () => {
  it('is unset by default: a 30-day quota and a bucket that never refills are accepted', () => {
    const store = new RedisStore();
    createLimiter({ policy: fixedWindow({ limit: 5, windowMs: '30d' }), store });
    createLimiter({ policy: tokenBucket({ capacity: 5, refillPerSecond: 0 }), store });
  });

  it('refuses, at wire-up, a limiter whose keys it would expire before they are at rest, naming both', () => {
    const store = new RedisStore({ maxTtlSeconds: 86_400 });
    const monthly = fixedWindow({ limit: 5, windowMs: '30d', name: 'monthly' });
    throwsConfig(() => createLimiter({ policy: monthly, store }), 'maxTtlSeconds');
    assert.throws(
      () => createLimiter({ policy: monthly, store }),
      /`maxTtlSeconds` must be at least 2592000 \(s\) for policy "monthly".*\(received 86400\)/,
    );
    assert.throws(
      () => createLimiter({ policy: tokenBucket({ capacity: 1, refillPerSecond: 0, name: 'once' }), store }),
      /`maxTtlSeconds` cannot be set while policy "once"/,
    );
    // Twice the window for the counter: 12 h windows need a day.
    createLimiter({ policy: slidingWindowCounter({ limit: 5, windowMs: '12h' }), store });
    throwsConfig(
      () => createLimiter({ policy: slidingWindowCounter({ limit: 5, windowMs: '13h' }), store }),
      'maxTtlSeconds',
    );
  });

  it('must be a positive integer no smaller than minTtlSeconds', () => {
    throwsConfig(() => new RedisStore({ maxTtlSeconds: 0 }), 'maxTtlSeconds');
    throwsConfig(() => new RedisStore({ maxTtlSeconds: 1.5 }), 'maxTtlSeconds');
    throwsConfig(() => new RedisStore({ maxTtlSeconds: 30 }), 'minTtlSeconds');
    new RedisStore({ maxTtlSeconds: 30, minTtlSeconds: 30 });
  });
});
