// Unit tests of the sliding window counter (two weighted counters): exact sequences, its bound, validation, clock edges.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { slidingWindowCounter } from '../../src/index.js';
import { Run, result, throwsConfig } from '../harness/policy-helpers.js';

describe('slidingWindowCounter: documented sequences', () => {
  it("limit 10 per '1s': the previous window's count weighs in proportion to its overlap", () => {
    const policy = slidingWindowCounter({ limit: 10, windowMs: '1s' });
    assert.deepEqual(policy.args, [10, 1000]);
    const run = new Run(policy);
    for (let i = 9; i >= 0; i--) assert.deepEqual(run.at(0), result(true, i, 2000, 0));
    // In the next window the 10 still weigh 10 * (1000 - elapsed) / 1000.
    assert.deepEqual(run.at(0), result(false, 0, 2000, 1100));
    assert.deepEqual(run.at(1099), result(false, 0, 901, 1));
    assert.deepEqual(run.at(1100), result(true, 0, 1900, 0));
    // At 1500 the estimate is 10 * 0.5 + 1 = 6.
    assert.deepEqual(run.at(1500), result(true, 3, 1500, 0));
    assert.equal(run.burst(1500, 10), 3);
    assert.deepEqual(run.at(1500), result(false, 0, 1500, 100));
    assert.deepEqual(run.at(1599), result(false, 0, 1401, 1));
    assert.deepEqual(run.at(1600), result(true, 0, 1400, 0));
  });

  it('weighted cost that only fits in the next window', () => {
    const run = new Run(slidingWindowCounter({ limit: 10, windowMs: 1000 }));
    assert.deepEqual(run.at(0, 4), result(true, 6, 2000, 0));
    // 4 + 7 > 10: wait for the next window, then until 4 * (1000 - e) / 1000 + 7 <= 10, i.e. e >= 250.
    assert.deepEqual(run.at(500, 7), result(false, 6, 1500, 750));
    assert.equal(run.peek(1249, 7).allowed, false);
    assert.deepEqual(run.at(1250, 7), result(true, 0, 1750, 0));
  });

  it('a client idle for two windows starts afresh, anchored at its new first request', () => {
    const run = new Run(slidingWindowCounter({ limit: 10, windowMs: 1000 }));
    assert.equal(run.burst(0, 10), 10);
    // One window later the previous count still weighs 10 * 1 / 1000 at 1999.
    assert.deepEqual(run.at(1999), result(true, 8, 1001, 0));
    assert.deepEqual(run.at(2999), result(true, 8, 1001, 0));
    assert.deepEqual(run.at(5000), result(true, 9, 2000, 0));
    assert.deepEqual(run.state, [5000, 0, 1]);
  });

  it('each anchored window admits at most limit, and a span of windowMs at most 2 x limit - 1', () => {
    const run = new Run(slidingWindowCounter({ limit: 10, windowMs: 1000 }));
    // A cost-0 request anchors the window at 0 with nothing spent; then all 10 come at its very end.
    assert.equal(run.at(0, 0).allowed, true);
    assert.equal(run.burst(999, 20), 10);
    // In (998, 1998] the 10 at 999 weigh 10 * 2 / 1000, so 9 more fit at 1998: 19 = 2 x 10 - 1.
    assert.equal(run.burst(1998, 20), 9);
    assert.equal(run.burst(1999, 20), 0);
  });

  it('a cost above the limit is denied with retryAfterMs -1 and writes nothing', () => {
    const policy = slidingWindowCounter({ limit: 5, windowMs: 1000 });
    const t = policy.evaluate(undefined, 0, 6);
    assert.deepEqual(t.result, result(false, 5, 0, -1));
    assert.equal(t.next, undefined);
  });

  it('limit 0 rejects everything, with no retry hint', () => {
    const run = new Run(slidingWindowCounter({ limit: 0, windowMs: 1000 }));
    for (const now of [0, 1000, 1e9]) assert.deepEqual(run.at(now), result(false, 0, 0, -1));
  });
});

describe('slidingWindowCounter: validation at construction', () => {
  it('rejects a bad limit or windowMs and accepts large limits', () => {
    for (const limit of [Number.NaN, -1, 0.5, Number.POSITIVE_INFINITY]) {
      throwsConfig(() => slidingWindowCounter({ limit, windowMs: 1000 }), 'limit');
    }
    for (const windowMs of [0, -1, 2.5, Number.NaN, '1x', 'ms']) {
      throwsConfig(() => slidingWindowCounter({ limit: 1, windowMs: windowMs as number }), 'windowMs');
    }
    assert.equal(slidingWindowCounter({ limit: 1_000_000, windowMs: '1h' }).limit, 1_000_000);
    throwsConfig(() => slidingWindowCounter({ limit: 2 ** 35, windowMs: '1d' }), 'limit');
  });
});

describe('slidingWindowCounter: state and time', () => {
  it('state is [start, previous, current]; a denial writes nothing; ttlMs runs to the end of the next window', () => {
    const policy = slidingWindowCounter({ limit: 2, windowMs: 1000 });
    const first = policy.evaluate(undefined, 100, 2);
    assert.deepEqual(first.next, [100, 0, 2]);
    assert.equal(first.ttlMs, 2000);
    const denied = policy.evaluate(first.next, 200, 1);
    assert.equal(denied.result.allowed, false);
    assert.equal(denied.next, undefined);
    assert.equal(denied.ttlMs, 0);
    const rolled = policy.evaluate(first.next, 1700, 1);
    assert.deepEqual(rolled.next, [1100, 2, 1]);
    assert.deepEqual(policy.evaluate(first.next, 2100, 1), policy.evaluate(undefined, 2100, 1));
  });

  it('waiting exactly retryAfterMs passes, and 1 ms less does not', () => {
    for (const [limit, windowMs] of [
      [10, 1000],
      [3, 7],
      [7, 333],
    ] as const) {
      const run = new Run(slidingWindowCounter({ limit, windowMs }));
      run.burst(0, limit - 1);
      run.at(windowMs - 1);
      for (const now of [windowMs - 1, windowMs, windowMs + 1, Math.floor(windowMs * 1.5)]) {
        for (let cost = 1; cost <= limit; cost++) {
          const r = run.peek(now, cost);
          if (r.allowed) continue;
          assert.equal(
            run.peek(now + r.retryAfterMs, cost).allowed,
            true,
            `${limit}/${windowMs} ${now}/${cost}`,
          );
          assert.equal(run.peek(now + r.retryAfterMs - 1, cost).allowed, false, `${now}/${cost}`);
        }
      }
    }
  });

  it('a clock moving backwards stays in the stored window and never mints', () => {
    const run = new Run(slidingWindowCounter({ limit: 3, windowMs: 1000 }));
    run.at(10_000);
    assert.equal(run.burst(5000, 10), 2);
    assert.deepEqual(run.state, [10_000, 0, 3]);
    for (const now of [0, 9999, 10_999]) assert.equal(run.peek(now).allowed, false, `at ${now}`);
  });

  it('after a clock step back, retryAfterMs, resetMs and ttlMs are measured from the given clock', () => {
    const run = new Run(slidingWindowCounter({ limit: 1, windowMs: 1000 }));
    run.at(10_000);
    const denied = run.peek(5000);
    assert.equal(denied.allowed, false);
    assert.equal(run.peek(5000 + denied.retryAfterMs).allowed, true);
    assert.equal(denied.resetMs, 7000);
  });
});
