// checkRetentionCap: a store's retention cap, in the store's own unit, held against the time each policy needs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fixedWindow, tokenBucket } from '../../../src/index.js';
import { checkRetentionCap } from '../../../src/stores/memory/retention.js';
import { pointed } from '../../harness/error-pointer.js';

const SECONDS = { ms: 1000, name: 's' };

describe('checkRetentionCap', () => {
  it('converts what a policy needs to the cap unit, rounding up', () => {
    const odd = fixedWindow({ limit: 5, windowMs: 90_500, name: 'odd' });
    assert.throws(() => checkRetentionCap('maxTtlSeconds', 90, SECONDS, [odd]), {
      code: 'ERR_TOLLGATE_CONFIG',
      option: 'maxTtlSeconds',
      message: pointed(
        '`maxTtlSeconds` must be at least 91 (s) for policy "odd", whose buckets take that long to come to rest (received 90)',
      ),
    });
    checkRetentionCap('maxTtlSeconds', 91, SECONDS, [odd]);
  });

  it('refuses any cap beside a bucket that never refills, and none beside one that needs no time', () => {
    const once = tokenBucket({ capacity: 1, refillPerSecond: 0, name: 'once' });
    assert.throws(() => checkRetentionCap('maxTtlSeconds', 60, SECONDS, [once]), {
      code: 'ERR_TOLLGATE_CONFIG',
      message: pointed(
        '`maxTtlSeconds` cannot be set while policy "once" (a token-bucket that never refills) must keep its state for ever; unset it (received 60)',
      ),
    });
    // Capacity 0 admits nothing, so no state is ever kept: any cap will do.
    const nothing = tokenBucket({ capacity: 0, refillPerSecond: 1 });
    assert.equal(nothing.retentionMs, 0);
    checkRetentionCap('maxTtlSeconds', 1, SECONDS, [nothing]);
  });

  it('checks nothing when no cap is set', () => {
    checkRetentionCap('maxTtlSeconds', undefined, SECONDS, [
      tokenBucket({ capacity: 1, refillPerSecond: 0 }),
    ]);
  });
});
