// Unit tests of the fixed window (anchored at the first request): exact decision sequences, validation, clock edges.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fixedWindow } from '../../src/index.js';
import { Run, result, throwsConfig } from '../harness/policy-helpers.js';

describe('fixedWindow: documented sequences', () => {
  it("limit 5 per '10s': counts down, denies until the window closes, then opens a new one", () => {
    const policy = fixedWindow({ limit: 5, windowMs: '10s' });
    assert.equal(policy.limit, 5);
    assert.equal(policy.windowMs, 10_000);
    assert.deepEqual(policy.args, [5, 10_000]);
    const run = new Run(policy);
    assert.deepEqual(run.at(1000), result(true, 4, 10_000, 0));
    assert.deepEqual(run.at(2000), result(true, 3, 9000, 0));
    assert.deepEqual(run.at(3000), result(true, 2, 8000, 0));
    assert.deepEqual(run.at(3000), result(true, 1, 8000, 0));
    assert.deepEqual(run.at(3000), result(true, 0, 8000, 0));
    assert.deepEqual(run.at(3000), result(false, 0, 8000, 8000));
    assert.deepEqual(run.at(10_999), result(false, 0, 1, 1));
    assert.deepEqual(run.at(11_000), result(true, 4, 10_000, 0));
  });

  it('windows are anchored at the first request after the previous one closed, not at the clock', () => {
    const run = new Run(fixedWindow({ limit: 5, windowMs: 10_000 }));
    assert.deepEqual(run.at(1234), result(true, 4, 10_000, 0));
    assert.deepEqual(run.at(53_210), result(true, 4, 10_000, 0));
    assert.deepEqual(run.at(63_209), result(true, 3, 1, 0));
    assert.deepEqual(run.at(63_210), result(true, 4, 10_000, 0));
  });

  it('the documented boundary burst: up to 2 x limit across a window edge', () => {
    const run = new Run(fixedWindow({ limit: 5, windowMs: 10_000 }));
    assert.deepEqual(run.at(0), result(true, 4, 10_000, 0));
    assert.equal(run.burst(9999, 10), 4);
    assert.equal(run.burst(10_000, 10), 5);
  });

  it('weighted cost', () => {
    const run = new Run(fixedWindow({ limit: 5, windowMs: 10_000 }));
    assert.deepEqual(run.at(0, 3), result(true, 2, 10_000, 0));
    assert.deepEqual(run.at(100, 3), result(false, 2, 9900, 9900));
    assert.deepEqual(run.at(200, 2), result(true, 0, 9800, 0));
    assert.deepEqual(run.at(10_000, 5), result(true, 0, 10_000, 0));
  });

  it('a cost above the limit is denied with retryAfterMs -1 and writes nothing', () => {
    const policy = fixedWindow({ limit: 5, windowMs: 10_000 });
    const fresh = policy.evaluate(undefined, 0, 6);
    assert.equal(fresh.result.allowed, false);
    assert.equal(fresh.result.remaining, 5);
    assert.equal(fresh.result.retryAfterMs, -1);
    assert.equal(fresh.next, undefined);
    const run = new Run(policy);
    run.at(0, 2);
    assert.deepEqual(run.at(500, 6), result(false, 3, 9500, -1));
  });

  it('limit 0 rejects everything, with no retry hint', () => {
    const run = new Run(fixedWindow({ limit: 0, windowMs: 1000 }));
    for (const now of [0, 1000, 1e9]) {
      const r = run.at(now);
      assert.equal(r.allowed, false);
      assert.equal(r.remaining, 0);
      assert.equal(r.retryAfterMs, -1);
    }
  });

  it('a denial on a client with no state reports resetMs 0 (it holds no trace)', () => {
    const t = fixedWindow({ limit: 5, windowMs: 10_000 }).evaluate(undefined, 0, 6);
    assert.equal(t.result.resetMs, 0);
  });
});

describe('fixedWindow: validation at construction', () => {
  const bad = (value: unknown) => value as number;

  it('rejects a bad limit', () => {
    for (const limit of [Number.NaN, -1, 1.5, Number.POSITIVE_INFINITY, bad('5'), bad(undefined)]) {
      throwsConfig(() => fixedWindow({ limit, windowMs: 1000 }), 'limit');
    }
  });

  it('rejects a bad windowMs', () => {
    for (const windowMs of [
      0,
      -1,
      1.5,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      'abc',
      '10',
      '10x',
      '-1s',
      '0s',
      '',
      '0.5ms',
      's',
    ]) {
      throwsConfig(() => fixedWindow({ limit: 5, windowMs: windowMs as number }), 'windowMs');
    }
    throwsConfig(() => fixedWindow({ limit: 5 } as never), 'windowMs');
  });

  it('accepts duration strings', () => {
    const cases: [string, number][] = [
      ['500ms', 500],
      ['10s', 10_000],
      ['1m', 60_000],
      ['1h', 3_600_000],
      ['1d', 86_400_000],
      ['1.5s', 1500],
      [' 10s ', 10_000],
      ['10 s', 10_000],
    ];
    for (const [text, ms] of cases) {
      assert.equal(fixedWindow({ limit: 1, windowMs: text as `${number}s` }).windowMs, ms, text);
    }
  });

  it('rejects limit x windowMs beyond exact integers', () => {
    throwsConfig(() => fixedWindow({ limit: 2 ** 40, windowMs: '1d' }), 'limit');
  });

  it('rejects a bad name', () => {
    throwsConfig(() => fixedWindow({ limit: 1, windowMs: 1000, name: 'x'.repeat(65) }), 'name');
    assert.equal(fixedWindow({ limit: 1, windowMs: 1000 }).name, 'fixed-window');
  });
});

describe('fixedWindow: state and time', () => {
  it('a denial returns next === undefined; ttlMs is the time to the window end', () => {
    const policy = fixedWindow({ limit: 1, windowMs: 1000 });
    const first = policy.evaluate(undefined, 100, 1);
    assert.deepEqual(first.next, [100, 1]);
    assert.equal(first.ttlMs, 1000);
    const second = policy.evaluate(first.next, 600, 1);
    assert.equal(second.result.allowed, false);
    assert.equal(second.next, undefined);
    assert.equal(second.ttlMs, 0);
    // At rest, the state means the same as none.
    assert.deepEqual(policy.evaluate(first.next, 1100, 1), policy.evaluate(undefined, 1100, 1));
  });

  it('waiting exactly retryAfterMs passes, and 1 ms less does not', () => {
    const run = new Run(fixedWindow({ limit: 3, windowMs: 777 }));
    run.at(50, 2);
    for (const [now, cost] of [
      [100, 2],
      [100, 3],
      [826, 2],
    ] as const) {
      const denied = run.peek(now, cost);
      assert.equal(denied.allowed, false);
      assert.equal(run.peek(now + denied.retryAfterMs, cost).allowed, true);
      assert.equal(run.peek(now + denied.retryAfterMs - 1, cost).allowed, false);
    }
  });

  it('a clock moving backwards stays in the stored window and never mints', () => {
    const run = new Run(fixedWindow({ limit: 5, windowMs: 10_000 }));
    assert.equal(run.burst(10_000, 2), 2);
    // Back in time: still the window [10000, 20000), which has 3 left.
    assert.equal(run.at(5000).remaining, 2);
    assert.equal(run.burst(0, 10), 2);
    for (const now of [0, 9999, 10_000, 19_999]) assert.equal(run.peek(now).allowed, false, `at ${now}`);
    assert.equal(run.peek(20_000).allowed, true);
  });

  it('after a clock step back, waiting exactly retryAfterMs (and resetMs, ttlMs) is measured from the given clock', () => {
    const policy = fixedWindow({ limit: 2, windowMs: 10_000 });
    const run = new Run(policy);
    run.at(10_000);
    const written = policy.evaluate(run.state, 5000, 1);
    assert.equal(written.ttlMs, 15_000);
    run.at(5000);
    const denied = run.peek(5000);
    assert.equal(denied.allowed, false);
    assert.equal(run.peek(5000 + denied.retryAfterMs).allowed, true);
    assert.equal(denied.resetMs, 15_000);
  });
});
