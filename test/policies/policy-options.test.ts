// Policy option checks at their exact boundaries, with the messages a user reads when one is refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fixedWindow, slidingWindow, slidingWindowCounter, tokenBucket } from '../../src/index.js';
import { alignedWindow } from '../../src/policies/aligned-window.js';
import { pointed } from '../harness/error-pointer.js';

/** Asserts `fn` throws a configuration error for `option` with exactly `message`, then the pointer to its code. */
function refuses(fn: () => unknown, option: string, message: string): void {
  assert.throws(fn, {
    name: 'TollgateError',
    code: 'ERR_TOLLGATE_CONFIG',
    option,
    message: pointed(message),
  });
}

const TWO_51 = 2 ** 51;

describe('tokenBucket: the rate', () => {
  it('needs a rate, given one way only', () => {
    refuses(
      () => tokenBucket({ capacity: 5 }),
      'refillPerSecond',
      '`refillPerSecond` is required (or `requestsPerMinute`)',
    );
    refuses(
      () => tokenBucket({ capacity: 5, refillPerSecond: 1, requestsPerMinute: 60 }),
      'refillPerSecond',
      '`refillPerSecond` cannot be combined with `requestsPerMinute`',
    );
  });

  it('allows one token per microsecond, and nothing faster', () => {
    assert.deepEqual(tokenBucket({ capacity: 3, refillPerSecond: 1_000_000 }).args, [3, 1]);
    refuses(
      () => tokenBucket({ capacity: 3, refillPerSecond: 1_000_000.0000000001 }),
      'refillPerSecond',
      '`refillPerSecond` must be at most 1000000 (one token per microsecond) (received 1000000.0000000001)',
    );
    refuses(
      () => tokenBucket({ capacity: 3, requestsPerMinute: 60_000_060 }),
      'refillPerSecond',
      '`refillPerSecond` must be at most 1000000 (one token per microsecond) (received 1000001)',
    );
  });

  it('allows a bucket that never refills, but no rate so slow that one token takes 2^51 µs', () => {
    assert.deepEqual(tokenBucket({ capacity: 5, refillPerSecond: 0 }).args, [5, 0]);
    const slow = 'must be 0 (never refills) or more than one token per 2^51 microseconds (about 71 years)';
    refuses(
      () => tokenBucket({ capacity: 1, refillPerSecond: 1e-10 }),
      'refillPerSecond',
      `\`refillPerSecond\` ${slow} (received 1e-10)`,
    );
    refuses(
      () => tokenBucket({ capacity: 1, requestsPerMinute: 6e-9 }),
      'requestsPerMinute',
      `\`requestsPerMinute\` ${slow} (received 6e-9)`,
    );
    // At the edge: one token per 2^51 - 1 µs passes, one per 2^51 µs does not.
    assert.deepEqual(tokenBucket({ capacity: 0, refillPerSecond: 1e6 / (2 ** 51 - 1) }).args, [
      0,
      2 ** 51 - 1,
    ]);
    assert.throws(() => tokenBucket({ capacity: 0, refillPerSecond: 1e6 / 2 ** 51 }), {
      option: 'refillPerSecond',
    });
  });

  it('takes a fractional requestsPerMinute only with an explicit capacity', () => {
    refuses(
      () => tokenBucket({ requestsPerMinute: 7.5 }),
      'requestsPerMinute',
      '`requestsPerMinute` must be a whole number unless `capacity` is given (it is the default capacity) (received 7.5)',
    );
    assert.deepEqual(tokenBucket({ requestsPerMinute: 7.5, capacity: 2 }).args, [2, 8_000_000]);
  });
});

describe('tokenBucket: capacity times the interval stays below 2^51 µs', () => {
  // At 1 token/s the interval is 10^6 µs, and 2^51 = 2,251,799,813,685,248.
  it('allows 2,251,799,813 tokens at 1/s, and refuses one more', () => {
    const largest = tokenBucket({ capacity: 2_251_799_813, refillPerSecond: 1 });
    assert.deepEqual(largest.args, [2_251_799_813, 1_000_000]);
    assert.equal(largest.windowMs, 2_251_799_813_000);
    refuses(
      () => tokenBucket({ capacity: 2_251_799_814, refillPerSecond: 1 }),
      'capacity',
      '`capacity` times the refill interval must stay below 2^51 microseconds (about 71 years) (received 2251799814)',
    );
  });

  it('refuses a capacity of 2^51 even at one token per microsecond', () => {
    assert.deepEqual(tokenBucket({ capacity: TWO_51 - 1, refillPerSecond: 1_000_000 }).args, [TWO_51 - 1, 1]);
    refuses(
      () => tokenBucket({ capacity: TWO_51, refillPerSecond: 1_000_000 }),
      'capacity',
      `\`capacity\` times the refill interval must stay below 2^51 microseconds (about 71 years) (received ${TWO_51})`,
    );
  });
});

describe('window policies: limit times windowMs stays below 2^51', () => {
  it('allows a product of 2^51 - 1 and refuses 2^51, for every window kind that is not aligned', () => {
    const message = '`limit` times `windowMs` must stay below 2^51';
    for (const make of [fixedWindow, slidingWindow, slidingWindowCounter]) {
      assert.deepEqual(make({ limit: 1, windowMs: TWO_51 - 1 }).args, [1, TWO_51 - 1]);
      assert.deepEqual(make({ limit: 8192, windowMs: 2 ** 38 - 1 }).args, [8192, 2 ** 38 - 1]);
      refuses(() => make({ limit: 1, windowMs: TWO_51 }), 'limit', message);
      refuses(() => make({ limit: 8192, windowMs: 2 ** 38 }), 'limit', message);
    }
    // The sliding log caps its limit lower; the others take any limit the product allows.
    for (const make of [fixedWindow, slidingWindowCounter]) {
      assert.deepEqual(make({ limit: TWO_51 - 1, windowMs: 1 }).args, [TWO_51 - 1, 1]);
      refuses(() => make({ limit: TWO_51, windowMs: 1 }), 'limit', message);
    }
  });

  it('an aligned window, which never multiplies them, bounds each below 2^51 alone', () => {
    assert.deepEqual(alignedWindow({ limit: TWO_51 - 1, windowMs: TWO_51 - 1 }).args, [
      TWO_51 - 1,
      TWO_51 - 1,
    ]);
    refuses(
      () => alignedWindow({ limit: TWO_51, windowMs: 1 }),
      'limit',
      `\`limit\` must stay below 2^51 (received ${TWO_51})`,
    );
    refuses(
      () => alignedWindow({ limit: 1, windowMs: TWO_51 }),
      'windowMs',
      `\`windowMs\` must stay below 2^51 ms (received ${TWO_51})`,
    );
  });
});

describe('policy names', () => {
  it('default to the kind', () => {
    assert.equal(tokenBucket({ capacity: 1, refillPerSecond: 1 }).name, 'token-bucket');
    assert.equal(fixedWindow({ limit: 1, windowMs: 1000 }).name, 'fixed-window');
    assert.equal(alignedWindow({ limit: 1, windowMs: 1000 }).name, 'aligned-window');
    assert.equal(slidingWindow({ limit: 1, windowMs: 1000 }).name, 'sliding-window');
    assert.equal(slidingWindowCounter({ limit: 1, windowMs: 1000 }).name, 'sliding-window-counter');
  });

  it('are 1-64 characters of letters, digits, ".", "_" and "-"', () => {
    for (const name of ['a', 'x'.repeat(64), 'Burst.per_second-2'])
      assert.equal(fixedWindow({ limit: 1, windowMs: 1000, name }).name, name);
    const rule = '`name` must be 1-64 characters of A-Z, a-z, 0-9, ".", "_" or "-"';
    refuses(
      () => tokenBucket({ capacity: 1, refillPerSecond: 1, name: 'a b' }),
      'name',
      `${rule} (received "a b")`,
    );
    refuses(() => fixedWindow({ limit: 1, windowMs: 1000, name: 'a:b' }), 'name', `${rule} (received "a:b")`);
    refuses(() => slidingWindow({ limit: 1, windowMs: 1000, name: '' }), 'name', `${rule} (received "")`);
    refuses(
      () => slidingWindowCounter({ limit: 1, windowMs: 1000, name: 'x'.repeat(65) }),
      'name',
      `${rule} (received "${'x'.repeat(65)}")`,
    );
    refuses(
      () => fixedWindow({ limit: 1, windowMs: 1000, name: 5 as unknown as string }),
      'name',
      `${rule} (received 5)`,
    );
  });
});
