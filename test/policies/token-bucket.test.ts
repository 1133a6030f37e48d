// Unit tests of the token bucket (GCRA in microseconds): exact decision sequences, validation and clock edge cases.
//
// Clock moving backwards, as documented in src/policies/token-bucket.ts ("A clock that went backwards finds tat
// ahead of it: nothing is minted, and nothing written is lost"): the stored theoretical arrival time is never
// moved back, so a step back of d ms makes the bucket look d ms emptier until the clock catches up. It never
// admits more than a monotonic clock would have, and its retryAfterMs counts from the (earlier) clock it was
// given, so waiting it out is enough. It does, however, hide tokens for d ms (pinned by the last test below).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tokenBucket } from '../../src/index.js';
import { Run, result, throwsConfig } from '../harness/policy-helpers.js';

describe('tokenBucket: documented sequences', () => {
  it('capacity 5 at 1/s: drains to 0, then one token per second', () => {
    const run = new Run(tokenBucket({ capacity: 5, refillPerSecond: 1 }));
    assert.deepEqual(run.at(0), result(true, 4, 1000, 0));
    assert.deepEqual(run.at(0), result(true, 3, 2000, 0));
    assert.deepEqual(run.at(0), result(true, 2, 3000, 0));
    assert.deepEqual(run.at(0), result(true, 1, 4000, 0));
    assert.deepEqual(run.at(0), result(true, 0, 5000, 0));
    assert.deepEqual(run.at(0), result(false, 0, 5000, 1000));
    assert.deepEqual(run.at(999), result(false, 0, 4001, 1));
    assert.deepEqual(run.at(1000), result(true, 0, 5000, 0));
    // Refill is continuous: half a token at 1500 is not enough, 500 ms more is.
    assert.deepEqual(run.at(1500), result(false, 0, 4500, 500));
    assert.deepEqual(run.at(2000), result(true, 0, 5000, 0));
  });

  it('refill is capped at capacity after a long idle period', () => {
    const run = new Run(tokenBucket({ capacity: 5, refillPerSecond: 1 }));
    assert.equal(run.burst(0, 5), 5);
    assert.deepEqual(run.at(3_600_000), result(true, 4, 1000, 0));
    assert.equal(run.burst(3_600_000, 10), 4);
  });

  it('fractional refill 0.5/s (capacity 5): one token every 2 s', () => {
    const policy = tokenBucket({ capacity: 5, refillPerSecond: 0.5 });
    assert.deepEqual(policy.args, [5, 2_000_000]);
    assert.equal(policy.windowMs, 10_000);
    const run = new Run(policy);
    assert.deepEqual(run.at(0), result(true, 4, 2000, 0));
    assert.equal(run.burst(0, 4), 4);
    assert.deepEqual(run.at(0), result(false, 0, 10_000, 2000));
    assert.deepEqual(run.at(1999), result(false, 0, 8001, 1));
    assert.deepEqual(run.at(2000), result(true, 0, 10_000, 0));
    // 8 s later: 4 tokens back (tat was 12 s).
    assert.equal(run.burst(10_000, 10), 4);
  });

  it('weighted cost spends several tokens; a cost that does not fit waits for the missing ones', () => {
    const run = new Run(tokenBucket({ capacity: 5, refillPerSecond: 1 }));
    assert.deepEqual(run.at(0, 3), result(true, 2, 3000, 0));
    assert.deepEqual(run.at(0, 3), result(false, 2, 3000, 1000));
    assert.deepEqual(run.at(999, 3), result(false, 2, 2001, 1));
    assert.deepEqual(run.at(1000, 3), result(true, 0, 5000, 0));
  });

  it('a cost above capacity is denied with retryAfterMs -1 and writes nothing', () => {
    const policy = tokenBucket({ capacity: 5, refillPerSecond: 1 });
    const t = policy.evaluate(undefined, 0, 6);
    assert.deepEqual(t.result, result(false, 5, 0, -1));
    assert.equal(t.next, undefined);
  });

  it('capacity 0 rejects everything, with no retry hint', () => {
    const run = new Run(tokenBucket({ capacity: 0, refillPerSecond: 1 }));
    for (const now of [0, 1000, 1e9]) {
      const r = run.at(now);
      assert.equal(r.allowed, false);
      assert.equal(r.remaining, 0);
      assert.equal(r.retryAfterMs, -1);
    }
  });

  it('refill 0 never refills: retryAfterMs and resetMs are -1 and the state never rests', () => {
    const policy = tokenBucket({ capacity: 3, refillPerSecond: 0 });
    assert.deepEqual(policy.args, [3, 0]);
    assert.equal(policy.windowMs, 0);
    const run = new Run(policy);
    const first = policy.evaluate(undefined, 0, 1);
    assert.deepEqual(first.result, result(true, 2, -1, 0));
    assert.equal(first.ttlMs, -1);
    assert.deepEqual(run.at(0), result(true, 2, -1, 0));
    assert.deepEqual(run.at(10, 2), result(true, 0, -1, 0));
    assert.deepEqual(run.at(20), result(false, 0, -1, -1));
    assert.deepEqual(run.at(1e12), result(false, 0, -1, -1));
  });

  it('high rate (5000/s) keeps an exact integer interval in microseconds', () => {
    const policy = tokenBucket({ capacity: 100, refillPerSecond: 5000 });
    assert.deepEqual(policy.args, [100, 200]);
    assert.equal(policy.windowMs, 20);
    const run = new Run(policy);
    assert.equal(run.burst(0, 150), 100);
    assert.equal(run.burst(1, 5), 5);
    assert.deepEqual(run.at(1), result(false, 0, 20, 1));
    let admitted = 105;
    for (let t = 2; t <= 1000; t++) admitted += run.burst(t, 10);
    assert.equal(admitted, 100 + 5000);
  });

  it('windowMs advertises the time to refill from empty', () => {
    assert.equal(tokenBucket({ capacity: 10, refillPerSecond: 1 }).windowMs, 10_000);
    assert.equal(tokenBucket({ capacity: 10, refillPerSecond: 3 }).windowMs, 3334);
    assert.equal(tokenBucket({ capacity: 10, refillPerSecond: 0.1 }).windowMs, 100_000);
    assert.deepEqual(tokenBucket({ capacity: 1, refillPerSecond: 0.1 }).args, [1, 10_000_000]);
  });
});

describe('tokenBucket: requestsPerMinute shorthand', () => {
  it('capacity defaults to requestsPerMinute and the rate is requestsPerMinute / 60', () => {
    const policy = tokenBucket({ requestsPerMinute: 60 });
    assert.equal(policy.limit, 60);
    assert.deepEqual(policy.args, [60, 1_000_000]);
    assert.equal(policy.windowMs, 60_000);
    const run = new Run(policy);
    assert.equal(run.burst(0, 100), 60);
    assert.deepEqual(run.at(0), result(false, 0, 60_000, 1000));
    assert.deepEqual(run.at(1000), result(true, 0, 60_000, 0));
  });

  it('an explicit capacity overrides the default', () => {
    const policy = tokenBucket({ requestsPerMinute: 30, capacity: 5 });
    assert.deepEqual(policy.args, [5, 2_000_000]);
    assert.equal(new Run(policy).burst(0, 10), 5);
  });

  it('requestsPerMinute 0 rejects everything, with no retry hint', () => {
    const policy = tokenBucket({ requestsPerMinute: 0 });
    assert.equal(policy.limit, 0);
    const run = new Run(policy);
    for (const now of [0, 60_000, 1e10]) {
      const r = run.at(now);
      assert.equal(r.allowed, false);
      assert.equal(r.remaining, 0);
      assert.equal(r.retryAfterMs, -1);
    }
  });
});

describe('tokenBucket: validation at construction', () => {
  it('names requestsPerMinute when a fractional rate would become the capacity', () => {
    throwsConfig(() => tokenBucket({ requestsPerMinute: 0.5 }), 'requestsPerMinute');
    assert.equal(tokenBucket({ requestsPerMinute: 0.5, capacity: 1 }).args[1], 120_000_000);
  });

  it('refuses rates finer than the engine represents, and vanishing ones', () => {
    throwsConfig(() => tokenBucket({ capacity: 1, refillPerSecond: 5e6 }), 'refillPerSecond');
    // A vanishing rate is the rate's fault, whatever the capacity: it is named, not `capacity`.
    for (const refillPerSecond of [5e-324, 1e-300, 4e-10]) {
      throwsConfig(() => tokenBucket({ capacity: 0, refillPerSecond }), 'refillPerSecond');
      throwsConfig(() => tokenBucket({ capacity: 5, refillPerSecond }), 'refillPerSecond');
    }
    throwsConfig(() => tokenBucket({ requestsPerMinute: 1e-300, capacity: 5 }), 'requestsPerMinute');
    assert.equal(tokenBucket({ capacity: 1, refillPerSecond: 5e-10 }).limit, 1, 'one token per ~63 years');
  });

  const bad = (value: unknown) => value as number;

  it('rejects bad capacity', () => {
    for (const capacity of [Number.NaN, -1, 1.5, Number.POSITIVE_INFINITY, bad('5'), bad(null)]) {
      throwsConfig(() => tokenBucket({ capacity, refillPerSecond: 1 }), 'capacity');
    }
  });

  it('requires capacity unless requestsPerMinute gives it', () => {
    throwsConfig(() => tokenBucket({ refillPerSecond: 1 }), 'capacity');
  });

  it('rejects bad refillPerSecond', () => {
    for (const refillPerSecond of [Number.NaN, -1, -0.5, Number.POSITIVE_INFINITY, bad('1')]) {
      throwsConfig(() => tokenBucket({ capacity: 5, refillPerSecond }), 'refillPerSecond');
    }
  });

  it('requires a rate', () => {
    throwsConfig(() => tokenBucket({ capacity: 5 }), 'refillPerSecond');
  });

  it('rejects bad requestsPerMinute', () => {
    for (const requestsPerMinute of [Number.NaN, -1, Number.NEGATIVE_INFINITY, bad('60')]) {
      throwsConfig(() => tokenBucket({ requestsPerMinute }), 'requestsPerMinute');
    }
  });

  it('rejects refillPerSecond together with requestsPerMinute', () => {
    throwsConfig(
      () => tokenBucket({ capacity: 5, refillPerSecond: 1, requestsPerMinute: 60 }),
      'refillPerSecond',
    );
  });

  it('rejects a capacity whose refill time is beyond exact integers', () => {
    throwsConfig(() => tokenBucket({ capacity: 1_000_000, refillPerSecond: 0.000001 }), 'capacity');
  });

  it('rejects a bad name and accepts a good one', () => {
    throwsConfig(() => tokenBucket({ capacity: 1, refillPerSecond: 1, name: 'a b' }), 'name');
    throwsConfig(() => tokenBucket({ capacity: 1, refillPerSecond: 1, name: '' }), 'name');
    assert.equal(tokenBucket({ capacity: 1, refillPerSecond: 1, name: 'burst' }).name, 'burst');
    assert.equal(tokenBucket({ capacity: 1, refillPerSecond: 1 }).name, 'token-bucket');
  });
});

describe('tokenBucket: state and time', () => {
  it('a denial returns next === undefined and ttlMs 0', () => {
    const policy = tokenBucket({ capacity: 1, refillPerSecond: 1 });
    const first = policy.evaluate(undefined, 0, 1);
    const second = policy.evaluate(first.next, 0, 1);
    assert.equal(second.result.allowed, false);
    assert.equal(second.next, undefined);
    assert.equal(second.ttlMs, 0);
  });

  it('ttlMs is the time until the bucket is full, and a state at rest means the same as no state', () => {
    const policy = tokenBucket({ capacity: 5, refillPerSecond: 1 });
    const t = policy.evaluate(undefined, 1000, 2);
    assert.equal(t.ttlMs, 2000);
    assert.deepEqual(policy.evaluate(t.next, 3000, 1), policy.evaluate(undefined, 3000, 1));
    assert.notDeepEqual(policy.evaluate(t.next, 2999, 1).result, policy.evaluate(undefined, 2999, 1).result);
  });

  it('waiting exactly retryAfterMs passes, and 1 ms less does not', () => {
    for (const [capacity, refillPerSecond] of [
      [5, 1],
      [5, 0.5],
      [3, 7],
      [100, 5000],
      [2, 1 / 3],
    ] as const) {
      const policy = tokenBucket({ capacity, refillPerSecond });
      for (const cost of [1, capacity]) {
        const run = new Run(policy);
        run.burst(0, capacity + 1);
        const denied = run.peek(0, cost);
        assert.equal(denied.allowed, false);
        assert.ok(denied.retryAfterMs > 0);
        assert.equal(run.peek(denied.retryAfterMs, cost).allowed, true, `${capacity}@${refillPerSecond}`);
        assert.equal(run.peek(denied.retryAfterMs - 1, cost).allowed, false);
      }
    }
  });

  it('a clock moving backwards never mints tokens', () => {
    const run = new Run(tokenBucket({ capacity: 5, refillPerSecond: 1 }));
    assert.equal(run.burst(10_000, 5), 5);
    for (const now of [0, 5000, 9999, 10_000]) assert.equal(run.peek(now).allowed, false, `at ${now}`);
    // The retry hint counts from the clock it was given, so waiting it out is enough.
    const back = run.at(5000);
    assert.deepEqual(back, result(false, 0, 10_000, 6000));
    assert.equal(run.peek(5000 + back.retryAfterMs).allowed, true);
    assert.equal(run.peek(5000 + back.retryAfterMs - 1).allowed, false);
  });

  it('after a step back, the bucket admits nothing until its stored time is caught up', () => {
    // The documented behaviour: tat is kept, so 5 s back looks like 5 s of tokens spent.
    const run = new Run(tokenBucket({ capacity: 5, refillPerSecond: 1 }));
    assert.deepEqual(run.at(10_000), result(true, 4, 1000, 0));
    assert.deepEqual(run.peek(5000), result(false, 0, 6000, 2000));
    assert.deepEqual(run.peek(7000), result(true, 0, 5000, 0));
  });
});

describe('tokenBucket: heldMs, the admissions booked ahead', () => {
  // 2 tokens, one a second: full again 2 s after empty, so a tat beyond now + 2 s is a booking.
  const bucket = tokenBucket({ capacity: 2, refillPerSecond: 1 });

  it('holds nothing while it owes no more than a full bucket', () => {
    assert.equal(bucket.heldMs?.(3_000_000, 1000), 0);
    assert.equal(bucket.heldMs?.(500_000, 1000), 0);
  });

  it('holds until the last booked admission, to the ms rounded up', () => {
    assert.equal(bucket.heldMs?.(3_000_001, 1000), 1);
    assert.equal(bucket.heldMs?.(4_500_000, 1000), 1500);
  });

  it('never holds one in a bucket that never refills: nothing is booked ahead there', () => {
    assert.equal(tokenBucket({ capacity: 2, refillPerSecond: 0 }).heldMs?.(7, 1000), 0);
  });
});
