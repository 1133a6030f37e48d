// Unit tests of each policy's refund: the exact state written back and its ttlMs, and when a refund changes nothing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fixedWindow, slidingWindow, slidingWindowCounter, tokenBucket } from '../../src/index.js';
import { Run, result } from './helpers.js';

describe('tokenBucket.refund: moves the full-again time back, never before now', () => {
  // One token per second: the state is tat in µs.
  const bucket = tokenBucket({ capacity: 5, refillPerSecond: 1 });

  it('gives back whole tokens: tat moves back cost x interval', () => {
    assert.deepEqual(bucket.refund(3_000_000, 0, 1, ''), { next: 2_000_000, ttlMs: 2000 });
    assert.deepEqual(bucket.refund(3_000_000, 500, 2, ''), { next: 1_000_000, ttlMs: 500 });
  });

  it('never past a full bucket: tat stops at now', () => {
    assert.deepEqual(bucket.refund(3_000_000, 500, 5, ''), { next: 500_000, ttlMs: 0 });
    assert.deepEqual(bucket.refund(500_001, 500, 1, ''), { next: 500_000, ttlMs: 0 });
  });

  it('changes nothing for no state, a full bucket, or cost 0', () => {
    assert.equal(bucket.refund(undefined, 500, 1, ''), undefined);
    assert.equal(bucket.refund(500_000, 500, 1, ''), undefined);
    assert.equal(bucket.refund(100_000, 500, 1, ''), undefined);
    assert.equal(bucket.refund(3_000_000, 500, 0, ''), undefined);
  });

  it('ttlMs rounds up to the whole ms in which the bucket is full again', () => {
    // 3 per second: one token every 333,334 µs.
    const three = tokenBucket({ capacity: 3, refillPerSecond: 3 });
    assert.deepEqual(three.refund(666_668, 0, 1, ''), { next: 333_334, ttlMs: 334 });
    assert.deepEqual(three.refund(666_668, 100, 1, ''), { next: 333_334, ttlMs: 234 });
  });

  it('after the clock moved back, tat (ahead of now) moves back by the tokens, never before now', () => {
    assert.deepEqual(bucket.refund(10_000_000, 5000, 1, ''), { next: 9_000_000, ttlMs: 4000 });
    assert.deepEqual(bucket.refund(10_000_000, 5000, 6, ''), { next: 5_000_000, ttlMs: 0 });
  });

  it('a bucket that never refills gets its tokens back, and still never rests', () => {
    // Its state counts the tokens spent, on a clock frozen at 0.
    const frozen = tokenBucket({ capacity: 3, refillPerSecond: 0 });
    assert.deepEqual(frozen.refund(2, 12_345, 1, ''), { next: 1, ttlMs: -1 });
    assert.deepEqual(frozen.refund(2, 12_345, 5, ''), { next: 0, ttlMs: -1 });
    assert.equal(frozen.refund(0, 12_345, 1, ''), undefined);
    assert.equal(frozen.refund(undefined, 12_345, 1, ''), undefined);
    const run = new Run(frozen);
    assert.equal(run.burst(0, 5), 3);
    run.state = frozen.refund(run.state, 99_999, 2, '')?.next;
    assert.deepEqual(run.at(99_999, 2), result(true, 0, -1, 0));
    assert.equal(run.at(99_999).allowed, false);
  });

  it('a refunded token can be spent again at once', () => {
    const run = new Run(bucket);
    assert.equal(run.burst(0, 6), 5);
    run.state = bucket.refund(run.state, 0, 1, '')?.next;
    assert.deepEqual(run.at(0), result(true, 0, 5000, 0));
  });
});

describe('fixedWindow.refund: takes units off the current window only', () => {
  const window = fixedWindow({ limit: 5, windowMs: 1000 });

  it('lowers the count, never below zero, and keeps the window end', () => {
    assert.deepEqual(window.refund([100, 3], 500, 1, ''), { next: [100, 2], ttlMs: 600 });
    assert.deepEqual(window.refund([100, 3], 500, 5, ''), { next: [100, 0], ttlMs: 600 });
    assert.deepEqual(window.refund([100, 3], 1099, 1, ''), { next: [100, 2], ttlMs: 1 });
  });

  it('changes nothing for no state, a window that has ended, a count of 0, or cost 0', () => {
    assert.equal(window.refund(undefined, 500, 1, ''), undefined);
    assert.equal(window.refund([100, 3], 1100, 1, ''), undefined);
    assert.equal(window.refund([100, 3], 5000, 1, ''), undefined);
    assert.equal(window.refund([100, 0], 500, 1, ''), undefined);
    assert.equal(window.refund([100, 3], 500, 0, ''), undefined);
  });

  it('after the clock moved back, the stored window is still the current one', () => {
    assert.deepEqual(window.refund([1000, 3], 500, 1, ''), { next: [1000, 2], ttlMs: 1500 });
  });

  it('a refunded unit can be spent again in the same window', () => {
    const run = new Run(window);
    assert.equal(run.burst(0, 6), 5);
    run.state = window.refund(run.state, 400, 2, '')?.next;
    assert.deepEqual(run.at(400, 2), result(true, 0, 600, 0));
    assert.equal(run.at(400).allowed, false);
  });
});

describe('slidingWindow.refund: drops the newest entries still in the window', () => {
  const log = slidingWindow({ limit: 5, windowMs: 1000 });

  it('pops one entry per unit and drops the expired ones; ttlMs is until the newest left leaves', () => {
    const state = [0, 100, 200, 200];
    // At 1000 the entry at 0 has left the window (0 <= 1000 - 1000).
    assert.deepEqual(log.refund(state, 1000, 1, ''), { next: [100, 200], ttlMs: 200 });
    assert.deepEqual(log.refund(state, 1000, 2, ''), { next: [100], ttlMs: 100 });
    assert.deepEqual(log.refund(state, 1000, 9, ''), { next: [], ttlMs: 0 });
    assert.deepEqual(log.refund([0, 100, 100], 1099, 1, ''), { next: [100], ttlMs: 1 });
  });

  it('changes nothing for no state, an empty log, only expired entries, or cost 0', () => {
    assert.equal(log.refund(undefined, 500, 1, ''), undefined);
    assert.equal(log.refund([], 500, 1, ''), undefined);
    assert.equal(log.refund([0, 100], 1100, 1, ''), undefined);
    assert.equal(log.refund([0, 100], 500, 0, ''), undefined);
  });

  it('after the clock moved back, the window is measured from the newest entry; ttlMs from the given clock', () => {
    assert.deepEqual(log.refund([0, 1500, 1500], 900, 1, ''), { next: [1500], ttlMs: 1600 });
    assert.deepEqual(log.refund([0, 600, 1500], 900, 1, ''), { next: [600], ttlMs: 700 });
  });

  it('a refunded unit can be spent again at once', () => {
    const run = new Run(log);
    assert.equal(run.burst(0, 6), 5);
    run.state = log.refund(run.state, 10, 1, '')?.next;
    assert.deepEqual(run.at(10), result(true, 0, 1000, 0));
    assert.deepEqual(run.state, [0, 0, 0, 0, 10]);
  });
});

describe('slidingWindowCounter.refund: takes units off the current window only', () => {
  const counter = slidingWindowCounter({ limit: 5, windowMs: 1000 });

  it('lowers the current count, never below zero; ttlMs is until the counts stop weighing', () => {
    assert.deepEqual(counter.refund([0, 3, 2], 500, 1, ''), { next: [0, 3, 1], ttlMs: 1500 });
    // Nothing left in the current window: the previous one weighs until the current one ends.
    assert.deepEqual(counter.refund([0, 3, 2], 500, 2, ''), { next: [0, 3, 0], ttlMs: 500 });
    assert.deepEqual(counter.refund([0, 3, 2], 500, 7, ''), { next: [0, 3, 0], ttlMs: 500 });
    assert.deepEqual(counter.refund([0, 0, 2], 500, 2, ''), { next: [0, 0, 0], ttlMs: 0 });
    assert.deepEqual(counter.refund([0, 3, 2], 999, 1, ''), { next: [0, 3, 1], ttlMs: 1001 });
  });

  it('changes nothing for no state, a window that has rolled over, a current count of 0, or cost 0', () => {
    assert.equal(counter.refund(undefined, 500, 1, ''), undefined);
    // Rolled over: the current count has become the weighted previous one, which a refund leaves alone.
    assert.equal(counter.refund([0, 3, 2], 1000, 1, ''), undefined);
    assert.equal(counter.refund([0, 3, 2], 2500, 1, ''), undefined);
    assert.equal(counter.refund([0, 3, 0], 500, 1, ''), undefined);
    assert.equal(counter.refund([0, 3, 2], 500, 0, ''), undefined);
  });

  it('after the clock moved back, the stored window is still the current one', () => {
    assert.deepEqual(counter.refund([1000, 0, 2], 500, 1, ''), { next: [1000, 0, 1], ttlMs: 2500 });
  });

  it('a refunded unit can be spent again at once', () => {
    const run = new Run(counter);
    assert.equal(run.burst(0, 6), 5);
    run.state = counter.refund(run.state, 300, 1, '')?.next;
    assert.deepEqual(run.at(300), result(true, 0, 1700, 0));
    assert.equal(run.at(300).allowed, false);
  });
});
