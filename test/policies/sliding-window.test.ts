// Unit tests of the sliding window log (exact, one timestamp per unit): decision sequences, validation, clock edges.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { slidingWindow } from '../../src/index.js';
import { Run, result, throwsConfig } from '../harness/policy-helpers.js';

describe('slidingWindow: documented sequences', () => {
  it("limit 5 per '10s': each unit leaves the window exactly windowMs after it was admitted", () => {
    const policy = slidingWindow({ limit: 5, windowMs: '10s' });
    assert.deepEqual(policy.args, [5, 10_000]);
    const run = new Run(policy);
    assert.deepEqual(run.at(0), result(true, 4, 10_000, 0));
    assert.deepEqual(run.at(1000), result(true, 3, 10_000, 0));
    assert.deepEqual(run.at(2000), result(true, 2, 10_000, 0));
    assert.deepEqual(run.at(3000), result(true, 1, 10_000, 0));
    assert.deepEqual(run.at(4000), result(true, 0, 10_000, 0));
    assert.deepEqual(run.at(5000), result(false, 0, 9000, 5000));
    assert.deepEqual(run.at(9999), result(false, 0, 4001, 1));
    assert.deepEqual(run.at(10_000), result(true, 0, 10_000, 0));
    assert.deepEqual(run.at(10_500), result(false, 0, 9500, 500));
    assert.deepEqual(run.at(11_000), result(true, 0, 10_000, 0));
  });

  it('no boundary burst: a full window stays full for windowMs', () => {
    const run = new Run(slidingWindow({ limit: 5, windowMs: 10_000 }));
    assert.equal(run.burst(9999, 5), 5);
    assert.equal(run.burst(10_000, 5), 0);
    assert.equal(run.burst(19_998, 5), 0);
    assert.equal(run.burst(19_999, 10), 5);
  });

  it('weighted cost: the wait is until enough of the oldest units have left', () => {
    const run = new Run(slidingWindow({ limit: 5, windowMs: 10_000 }));
    assert.deepEqual(run.at(0, 3), result(true, 2, 10_000, 0));
    assert.deepEqual(run.at(1000, 2), result(true, 0, 10_000, 0));
    assert.deepEqual(run.at(2000, 1), result(false, 0, 9000, 8000));
    assert.deepEqual(run.at(2000, 3), result(false, 0, 9000, 8000));
    assert.deepEqual(run.at(2000, 4), result(false, 0, 9000, 9000));
    assert.deepEqual(run.at(2000, 5), result(false, 0, 9000, 9000));
    assert.deepEqual(run.at(9999, 3), result(false, 0, 1001, 1));
    assert.deepEqual(run.at(10_000, 3), result(true, 0, 10_000, 0));
  });

  it('a cost above the limit is denied with retryAfterMs -1 and writes nothing', () => {
    const policy = slidingWindow({ limit: 5, windowMs: 10_000 });
    const t = policy.evaluate(undefined, 0, 6);
    assert.deepEqual(t.result, result(false, 5, 0, -1));
    assert.equal(t.next, undefined);
    const run = new Run(policy);
    run.at(0, 2);
    assert.deepEqual(run.at(500, 6), result(false, 3, 9500, -1));
  });

  it('limit 0 rejects everything, with no retry hint', () => {
    const run = new Run(slidingWindow({ limit: 0, windowMs: 1000 }));
    for (const now of [0, 1000, 1e9]) assert.deepEqual(run.at(now), result(false, 0, 0, -1));
  });

  it('a cost-0 evaluation reports resetMs as the time until the log is empty', () => {
    const policy = slidingWindow({ limit: 1, windowMs: 1000 });
    assert.equal(policy.evaluate(undefined, 0, 0).result.resetMs, 0);
    const first = policy.evaluate(undefined, 0, 1);
    assert.equal(policy.evaluate(first.next, 900, 0).result.resetMs, 100);
  });
});

describe('slidingWindow: validation at construction', () => {
  it('accepts a limit up to its cap and rejects one above, naming the alternative', () => {
    assert.equal(slidingWindow({ limit: 10_000, windowMs: 1000 }).limit, 10_000);
    throwsConfig(() => slidingWindow({ limit: 10_001, windowMs: 1000 }), 'limit');
    assert.throws(() => slidingWindow({ limit: 10_001, windowMs: 1000 }), /slidingWindowCounter/);
  });

  it('rejects a bad limit or windowMs', () => {
    for (const limit of [Number.NaN, -1, 2.5, Number.POSITIVE_INFINITY]) {
      throwsConfig(() => slidingWindow({ limit, windowMs: 1000 }), 'limit');
    }
    for (const windowMs of [0, -5, 0.5, Number.NaN, '5 minutes', '1w', '1e3ms']) {
      throwsConfig(() => slidingWindow({ limit: 1, windowMs: windowMs as number }), 'windowMs');
    }
  });

  it("accepts '10s' and '1m'", () => {
    assert.equal(slidingWindow({ limit: 1, windowMs: '10s' }).windowMs, 10_000);
    assert.equal(slidingWindow({ limit: 1, windowMs: '1m' }).windowMs, 60_000);
  });
});

describe('slidingWindow: state and time', () => {
  it('a request of cost n adds n entries; a denial writes nothing', () => {
    const policy = slidingWindow({ limit: 3, windowMs: 1000 });
    const first = policy.evaluate(undefined, 5, 2);
    assert.deepEqual(first.next, [5, 5]);
    assert.equal(first.ttlMs, 1000);
    const denied = policy.evaluate(first.next, 6, 2);
    assert.equal(denied.result.allowed, false);
    assert.equal(denied.next, undefined);
    assert.equal(denied.ttlMs, 0);
    // Expired entries are trimmed on the next write.
    assert.deepEqual(policy.evaluate(first.next, 1005, 1).next, [1005]);
  });

  it('waiting exactly retryAfterMs passes, and 1 ms less does not', () => {
    const run = new Run(slidingWindow({ limit: 4, windowMs: 300 }));
    run.at(0, 1);
    run.at(10, 2);
    run.at(20, 1);
    for (const [now, cost] of [
      [30, 1],
      [30, 2],
      [30, 3],
      [30, 4],
      [305, 2],
    ] as const) {
      const denied = run.peek(now, cost);
      assert.equal(denied.allowed, false, `${now}/${cost}`);
      assert.equal(run.peek(now + denied.retryAfterMs, cost).allowed, true, `${now}/${cost}`);
      assert.equal(run.peek(now + denied.retryAfterMs - 1, cost).allowed, false, `${now}/${cost}`);
    }
  });

  it('a clock moving backwards is held at the newest entry and never mints', () => {
    const run = new Run(slidingWindow({ limit: 2, windowMs: 10_000 }));
    run.at(10_000);
    const back = run.policy.evaluate(run.state, 5000, 1);
    assert.deepEqual(back.next, [10_000, 10_000]);
    run.at(5000);
    for (const now of [0, 5000, 19_999]) assert.equal(run.peek(now).allowed, false, `at ${now}`);
    assert.equal(run.peek(20_000).allowed, true);
  });

  it('after a clock step back, retryAfterMs, resetMs and ttlMs are measured from the given clock', () => {
    const run = new Run(slidingWindow({ limit: 1, windowMs: 10_000 }));
    run.at(10_000);
    const denied = run.peek(5000);
    assert.equal(denied.allowed, false);
    assert.equal(run.peek(5000 + denied.retryAfterMs).allowed, true);
    assert.equal(denied.resetMs, 15_000);
  });

  it('a state at rest means the same as no state, even for a cost above the limit (policy.ts contract)', () => {
    const policy = slidingWindow({ limit: 5, windowMs: 1000 });
    const first = policy.evaluate(undefined, 0, 1);
    assert.deepEqual(policy.evaluate(first.next, 5000, 6), policy.evaluate(undefined, 5000, 6));
    assert.deepEqual(policy.evaluate(first.next, 5000, 6).result, result(false, 5, 0, -1));
  });
});
