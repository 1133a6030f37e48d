// Unit tests of each policy's refund: the exact state written back and its ttlMs, when a refund changes nothing, and
// that a late refund (its units spent in a window since ended) hands back nothing a later window holds.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fixedWindow, slidingWindow, slidingWindowCounter, tokenBucket } from '../../src/index.js';
import { evaluatePolicies } from '../../src/policies/evaluate.js';
import { Run, result } from '../harness/policy-helpers.js';

describe('tokenBucket.refund: moves the full-again time back, never before now', () => {
  // One token per second: the state is tat in µs.
  const bucket = tokenBucket({ capacity: 5, refillPerSecond: 1 });

  it('gives back whole tokens: tat moves back cost x interval', () => {
    assert.deepEqual(bucket.refund(3_000_000, 0, 1, '', 0), { next: 2_000_000, ttlMs: 2000 });
    assert.deepEqual(bucket.refund(3_000_000, 500, 2, '', 500), { next: 1_000_000, ttlMs: 500 });
  });

  it('never past a full bucket: tat stops at now', () => {
    assert.deepEqual(bucket.refund(3_000_000, 500, 5, '', 500), { next: 500_000, ttlMs: 0 });
    assert.deepEqual(bucket.refund(500_001, 500, 1, '', 500), { next: 500_000, ttlMs: 0 });
  });

  it('changes nothing for no state, a full bucket, or cost 0', () => {
    assert.equal(bucket.refund(undefined, 500, 1, '', 500), undefined);
    assert.equal(bucket.refund(500_000, 500, 1, '', 500), undefined);
    assert.equal(bucket.refund(100_000, 500, 1, '', 500), undefined);
    assert.equal(bucket.refund(3_000_000, 500, 0, '', 500), undefined);
  });

  it('ttlMs rounds up to the whole ms in which the bucket is full again', () => {
    // 3 per second: one token every 333,334 µs.
    const three = tokenBucket({ capacity: 3, refillPerSecond: 3 });
    assert.deepEqual(three.refund(666_668, 0, 1, '', 0), { next: 333_334, ttlMs: 334 });
    assert.deepEqual(three.refund(666_668, 100, 1, '', 100), { next: 333_334, ttlMs: 234 });
  });

  it('after the clock moved back, tat (ahead of now) moves back by the tokens, never before now', () => {
    assert.deepEqual(bucket.refund(10_000_000, 5000, 1, '', 5000), { next: 9_000_000, ttlMs: 4000 });
    assert.deepEqual(bucket.refund(10_000_000, 5000, 6, '', 5000), { next: 5_000_000, ttlMs: 0 });
  });

  it('a late refund gives back cost x interval less the time since the spend: what the refill has not', () => {
    // 2 tokens spent at 0, refunded at 500: half a token has come back by itself already.
    assert.deepEqual(bucket.refund(3_000_000, 500, 2, '', 0), { next: 1_500_000, ttlMs: 1000 });
    assert.equal(bucket.refund(5_000_000, 1000, 1, '', 0), undefined);
    assert.equal(bucket.refund(5_000_000, 2000, 1, '', 0), undefined);
    assert.deepEqual(bucket.refund(5_000_000, 999, 1, '', 0), { next: 4_999_000, ttlMs: 4000 });
  });

  it('a booked admission, refunded before its instant, gets every token back', () => {
    assert.deepEqual(bucket.refund(3_000_000, 500, 1, '', 900), { next: 2_000_000, ttlMs: 1500 });
  });

  it('a refund after the bucket came full and was spent again gives the new spend nothing', () => {
    const run = new Run(bucket);
    assert.equal(run.burst(0, 5), 5);
    // Full again at 5000, and spent whole by the next request.
    assert.equal(run.burst(5000, 5), 5);
    assert.equal(bucket.refund(run.state, 5000, 5, '', 0), undefined);
    assert.equal(run.at(5000).allowed, false);
    // The same refund, named by the second spend, gives it all back.
    assert.deepEqual(bucket.refund(run.state, 5000, 5, '', 5000), { next: 5_000_000, ttlMs: 0 });
  });

  it('a late refund on a busy bucket gives back what its refill has not reached: spent tokens refill last', () => {
    // 60 rpm, 30 tokens used: the token spent at 0 refills during [30 s, 31 s] (its decision's resetMs, 31000).
    const rpm = tokenBucket({ requestsPerMinute: 60 });
    const run = new Run(rpm);
    assert.equal(run.burst(0, 30), 30);
    assert.equal(run.at(0).resetMs, 31_000);
    // A failed response 1 s later: the whole token is still owed (full at the spend, 1 s would have refilled it).
    assert.deepEqual(rpm.refund(run.state, 1000, 1, '', 0, 31_000), { next: 30_000_000, ttlMs: 29_000 });
    assert.equal(rpm.refund(run.state, 1000, 1, '', 0), undefined, 'without the decision, only what is sure');
    // Two more spent at 0 (refilling during [31 s, 33 s]), then one at 10 s; half a token of the two refilled by 32.5 s.
    assert.equal(run.at(0, 2).resetMs, 33_000);
    run.at(10_000);
    assert.deepEqual(rpm.refund(run.state, 32_500, 2, '', 0, 33_000), { next: 33_500_000, ttlMs: 1000 });
    assert.deepEqual(rpm.refund(run.state, 32_999, 2, '', 0, 33_000), { next: 33_999_000, ttlMs: 1000 });
    // Once its refill has given them back, a refund gives nothing, however busy the bucket is since.
    assert.equal(rpm.refund(run.state, 33_000, 2, '', 0, 33_000), undefined);
    assert.equal(rpm.refund(run.state, 40_000, 2, '', 0, 33_000), undefined);
  });

  it('a decision rounded to the ms never names a later refill than the real one: up to 999 µs less is owed', () => {
    // 3 per second: one token every 333,334 µs, so the decision's resetMs (whole ms, rounded up) is not exact.
    const three = tokenBucket({ capacity: 3, refillPerSecond: 3 });
    const run = new Run(three);
    assert.equal(run.at(0).resetMs, 334);
    assert.equal(run.at(0).resetMs, 667);
    assert.equal(run.state, 666_668);
    // The first, spent on a full bucket, refills during [0, 333,334]: at 100 ms 233,334 µs of it are owed, exactly.
    assert.deepEqual(three.refund(run.state, 100, 1, '', 0, 334), { next: 433_334, ttlMs: 334 });
    // The second refills during [333,334, 666,668]; its decision says 667 ms, of which 666,001 µs are sure.
    assert.deepEqual(three.refund(run.state, 500, 1, '', 0, 667), { next: 500_667, ttlMs: 1 });
  });

  it('with several policies, each gives back by its own figures in the spending decision', () => {
    const slow = tokenBucket({ name: 'slow', requestsPerMinute: 60 });
    const fast = tokenBucket({ name: 'fast', capacity: 10, refillPerSecond: 10 });
    const policies = [slow, fast];
    const spend = evaluatePolicies(policies, [20_000_000, 500_000], 0, { action: 'consume', cost: 1 });
    assert.deepEqual(
      spend.results.map((r) => r.resetMs),
      [21_000, 600],
    );
    // One more request after it, so that a token given back shows in each state.
    const spent = evaluatePolicies(
      policies,
      spend.writes.map((w) => w.next),
      0,
      { action: 'consume', cost: 1 },
    ).writes.map((w) => w.next);
    const refund = (nowMs: number, spentResetMs?: readonly number[]) =>
      evaluatePolicies(policies, spent, nowMs, {
        action: 'refund',
        cost: 1,
        spentAtMs: 0,
        ...(spentResetMs === undefined ? {} : { spentResetMs }),
      }).writes.map((w) => w.next);
    // The slow bucket owes the whole token still; the fast one has refilled half of it.
    assert.deepEqual(refund(550, [21_000, 600]), [21_000_000, 650_000]);
    // Without the figures, only a full bucket's refill is assumed.
    assert.deepEqual(refund(550), [21_550_000, undefined]);
  });

  it('a bucket that never refills gets its tokens back, and still never rests', () => {
    // Its state counts the tokens spent, on a clock frozen at 0.
    const frozen = tokenBucket({ capacity: 3, refillPerSecond: 0 });
    assert.deepEqual(frozen.refund(2, 12_345, 1, '', 12_345), { next: 1, ttlMs: -1 });
    // However long ago they were spent: no refill has given them back.
    assert.deepEqual(frozen.refund(2, 12_345, 1, '', 0), { next: 1, ttlMs: -1 });
    assert.deepEqual(frozen.refund(2, 12_345, 5, '', 12_345), { next: 0, ttlMs: -1 });
    assert.equal(frozen.refund(0, 12_345, 1, '', 12_345), undefined);
    assert.equal(frozen.refund(undefined, 12_345, 1, '', 12_345), undefined);
    const run = new Run(frozen);
    assert.equal(run.burst(0, 5), 3);
    run.state = frozen.refund(run.state, 99_999, 2, '', 99_999)?.next;
    assert.deepEqual(run.at(99_999, 2), result(true, 0, -1, 0));
    assert.equal(run.at(99_999).allowed, false);
  });

  it('a refunded token can be spent again at once', () => {
    const run = new Run(bucket);
    assert.equal(run.burst(0, 6), 5);
    run.state = bucket.refund(run.state, 0, 1, '', 0)?.next;
    assert.deepEqual(run.at(0), result(true, 0, 5000, 0));
  });
});

describe('fixedWindow.refund: takes units off the window that counted them, while it lasts', () => {
  const window = fixedWindow({ limit: 5, windowMs: 1000 });

  it('lowers the count, never below zero, and keeps the window end', () => {
    assert.deepEqual(window.refund([100, 3], 500, 1, '', 500), { next: [100, 2], ttlMs: 600 });
    assert.deepEqual(window.refund([100, 3], 500, 5, '', 500), { next: [100, 0], ttlMs: 600 });
    assert.deepEqual(window.refund([100, 3], 1099, 1, '', 1099), { next: [100, 2], ttlMs: 1 });
  });

  it('changes nothing for no state, a window that has ended, a count of 0, or cost 0', () => {
    assert.equal(window.refund(undefined, 500, 1, '', 500), undefined);
    assert.equal(window.refund([100, 3], 1100, 1, '', 1100), undefined);
    assert.equal(window.refund([100, 3], 5000, 1, '', 5000), undefined);
    assert.equal(window.refund([100, 0], 500, 1, '', 500), undefined);
    assert.equal(window.refund([100, 3], 500, 0, '', 500), undefined);
  });

  it('gives back only units spent within the stored window: from its start to before its end', () => {
    assert.deepEqual(window.refund([100, 3], 500, 1, '', 100), { next: [100, 2], ttlMs: 600 });
    assert.deepEqual(window.refund([100, 3], 500, 1, '', 1099), { next: [100, 2], ttlMs: 600 });
    // Spent before the window opened: a later request opened it, and the units were counted in an earlier one.
    assert.equal(window.refund([100, 3], 500, 1, '', 99), undefined);
    // Spent after it ended (a clock out of step): it never counted them either.
    assert.equal(window.refund([100, 3], 500, 1, '', 1100), undefined);
    // Spent in it, but it has ended since: at rest, nothing is left to give back to.
    assert.equal(window.refund([100, 3], 1100, 1, '', 500), undefined);
    assert.deepEqual(window.refund([100, 3], 1099, 1, '', 500), { next: [100, 2], ttlMs: 1 });
  });

  it('a failed request that outlived its window gives nothing back to the next one', () => {
    const run = new Run(window);
    assert.equal(run.burst(0, 5), 5);
    // The next request at 1000 opens a new window and spends it whole.
    assert.equal(run.burst(1000, 5), 5);
    assert.equal(window.refund(run.state, 1200, 1, '', 0), undefined);
    assert.equal(run.at(1200).allowed, false);
    assert.deepEqual(window.refund(run.state, 1200, 1, '', 1000), { next: [1000, 4], ttlMs: 800 });
  });

  it('after the clock moved back, the stored window still takes units spent in it', () => {
    assert.deepEqual(window.refund([1000, 3], 500, 1, '', 1000), { next: [1000, 2], ttlMs: 1500 });
    // Spent on the clock behind the window's start: counted here or in an earlier window, so they stay.
    assert.equal(window.refund([1000, 3], 500, 1, '', 500), undefined);
  });

  it('a refunded unit can be spent again in the same window', () => {
    const run = new Run(window);
    assert.equal(run.burst(0, 6), 5);
    run.state = window.refund(run.state, 400, 2, '', 400)?.next;
    assert.deepEqual(run.at(400, 2), result(true, 0, 600, 0));
    assert.equal(run.at(400).allowed, false);
  });
});

describe('slidingWindow.refund: drops the refunded units own entries, never a later request', () => {
  const log = slidingWindow({ limit: 5, windowMs: 1000 });

  it('pops one entry per unit and drops the expired ones; ttlMs is until the newest left leaves', () => {
    const state = [0, 100, 200, 200];
    // At 1000 the entry at 0 has left the window (0 <= 1000 - 1000).
    assert.deepEqual(log.refund(state, 1000, 1, '', 1000), { next: [100, 200], ttlMs: 200 });
    assert.deepEqual(log.refund(state, 1000, 2, '', 1000), { next: [100], ttlMs: 100 });
    assert.deepEqual(log.refund(state, 1000, 9, '', 1000), { next: [], ttlMs: 0 });
    assert.deepEqual(log.refund([0, 100, 100], 1099, 1, '', 1099), { next: [100], ttlMs: 1 });
  });

  it('changes nothing for no state, an empty log, only expired entries, or cost 0', () => {
    assert.equal(log.refund(undefined, 500, 1, '', 500), undefined);
    assert.equal(log.refund([], 500, 1, '', 500), undefined);
    assert.equal(log.refund([0, 100], 1100, 1, '', 1100), undefined);
    assert.equal(log.refund([0, 100], 500, 0, '', 500), undefined);
  });

  it('drops the newest live entries stamped no later than the spend, keeping the later ones', () => {
    assert.deepEqual(log.refund([100, 200, 300], 500, 1, '', 200), { next: [100, 300], ttlMs: 800 });
    assert.deepEqual(log.refund([100, 200, 300], 500, 2, '', 200), { next: [300], ttlMs: 800 });
    assert.deepEqual(log.refund([100, 200, 300], 500, 9, '', 250), { next: [300], ttlMs: 800 });
    assert.deepEqual(log.refund([100, 200, 200, 300], 500, 1, '', 299), {
      next: [100, 200, 300],
      ttlMs: 800,
    });
    assert.equal(log.refund([100, 200, 300], 500, 1, '', 99), undefined);
    // Only expired entries are as old as the spend: nothing live is its.
    assert.equal(log.refund([100, 1200], 1500, 1, '', 50), undefined);
  });

  it('a spend whose entries have left the window gives nothing back, not even a later request its room', () => {
    const run = new Run(log);
    assert.equal(run.burst(0, 5), 5);
    // At 1000 the first five have left; the next five take their place.
    assert.equal(run.burst(1000, 5), 5);
    assert.equal(log.refund(run.state, 1200, 1, '', 0), undefined);
    assert.equal(run.at(1200).allowed, false);
    assert.deepEqual(log.refund(run.state, 1200, 1, '', 1000), {
      next: [1000, 1000, 1000, 1000],
      ttlMs: 800,
    });
  });

  it('after the clock moved back, the window is measured from the newest entry; ttlMs from the given clock', () => {
    assert.deepEqual(log.refund([0, 1500, 1500], 900, 1, '', 1500), { next: [1500], ttlMs: 1600 });
    // Units spent on the clock behind: an older entry goes, never the later request's at 1500.
    assert.deepEqual(log.refund([0, 600, 1500], 900, 1, '', 900), { next: [1500], ttlMs: 1600 });
    assert.equal(log.refund([0, 1500, 1500], 900, 1, '', 900), undefined);
  });

  it('a refunded unit can be spent again at once', () => {
    const run = new Run(log);
    assert.equal(run.burst(0, 6), 5);
    run.state = log.refund(run.state, 10, 1, '', 10)?.next;
    assert.deepEqual(run.at(10), result(true, 0, 1000, 0));
    assert.deepEqual(run.state, [0, 0, 0, 0, 10]);
  });
});

describe('slidingWindowCounter.refund: takes units off the window that counted them, current or previous', () => {
  const counter = slidingWindowCounter({ limit: 5, windowMs: 1000 });

  it('lowers the current count, never below zero; ttlMs is until the counts stop weighing', () => {
    assert.deepEqual(counter.refund([0, 3, 2], 500, 1, '', 500), { next: [0, 3, 1], ttlMs: 1500 });
    // Nothing left in the current window: the previous one weighs until the current one ends.
    assert.deepEqual(counter.refund([0, 3, 2], 500, 2, '', 500), { next: [0, 3, 0], ttlMs: 500 });
    assert.deepEqual(counter.refund([0, 3, 2], 500, 7, '', 500), { next: [0, 3, 0], ttlMs: 500 });
    assert.deepEqual(counter.refund([0, 0, 2], 500, 2, '', 500), { next: [0, 0, 0], ttlMs: 0 });
    assert.deepEqual(counter.refund([0, 3, 2], 999, 1, '', 999), { next: [0, 3, 1], ttlMs: 1001 });
  });

  it('changes nothing for no state, a window that has rolled over, a current count of 0, or cost 0', () => {
    assert.equal(counter.refund(undefined, 500, 1, '', 500), undefined);
    // Rolled over: units spent now are in the new window, which holds none yet.
    assert.equal(counter.refund([0, 3, 2], 1000, 1, '', 1000), undefined);
    assert.equal(counter.refund([0, 3, 2], 2500, 1, '', 2500), undefined);
    assert.equal(counter.refund([0, 3, 0], 500, 1, '', 500), undefined);
    assert.equal(counter.refund([0, 3, 2], 500, 0, '', 500), undefined);
  });

  it('units spent in the previous window come off its weighted count, as the state reads now', () => {
    assert.deepEqual(counter.refund([1000, 3, 2], 1500, 1, '', 800), { next: [1000, 2, 2], ttlMs: 1500 });
    assert.deepEqual(counter.refund([1000, 3, 2], 1500, 1, '', 0), { next: [1000, 2, 2], ttlMs: 1500 });
    assert.deepEqual(counter.refund([1000, 3, 0], 1500, 9, '', 0), { next: [1000, 0, 0], ttlMs: 0 });
    // The stored window has ended: its count is the previous one now, and the state is written as rolled over.
    assert.deepEqual(counter.refund([0, 3, 2], 1500, 1, '', 500), { next: [1000, 1, 0], ttlMs: 500 });
    assert.deepEqual(counter.refund([0, 3, 2], 1000, 1, '', 500), { next: [1000, 1, 0], ttlMs: 1000 });
    assert.deepEqual(counter.refund([0, 3, 2], 1999, 2, '', 0), { next: [1000, 0, 0], ttlMs: 0 });
    assert.deepEqual(counter.refund([0, 3, 2], 1999, 1, '', 0), { next: [1000, 1, 0], ttlMs: 1 });
  });

  it('units spent before the previous window, or after the current one, weigh nothing here', () => {
    assert.equal(counter.refund([2000, 3, 2], 2500, 1, '', 999), undefined);
    assert.deepEqual(counter.refund([2000, 3, 2], 2500, 1, '', 1000), { next: [2000, 2, 2], ttlMs: 1500 });
    assert.equal(counter.refund([0, 3, 2], 500, 1, '', 1000), undefined);
    assert.deepEqual(counter.refund([0, 3, 2], 500, 1, '', 999), { next: [0, 3, 1], ttlMs: 1500 });
    // Two windows on, nothing weighs: even units of the stored window are at rest.
    assert.equal(counter.refund([0, 3, 2], 2000, 1, '', 500), undefined);
    assert.equal(counter.refund([1000, 0, 2], 1500, 1, '', 500), undefined);
  });

  it('a failed request that outlived its window gives the next window nothing', () => {
    const run = new Run(counter);
    assert.equal(run.burst(0, 5), 5);
    // Halfway through the next window the previous five weigh 2.5: two more pass.
    assert.equal(run.burst(1500, 3), 2);
    assert.deepEqual(run.state, [1000, 5, 2]);
    // Units spent at 0 come off the previous count (now weighing 0.4 each), not the two of this window.
    assert.deepEqual(counter.refund(run.state, 1600, 2, '', 0), { next: [1000, 3, 2], ttlMs: 1400 });
    run.state = counter.refund(run.state, 1600, 2, '', 0)?.next;
    assert.deepEqual(run.at(1600), result(true, 0, 1400, 0));
    assert.equal(run.at(1600).allowed, false);
  });

  it('after the clock moved back, the stored window still takes units spent in it', () => {
    assert.deepEqual(counter.refund([1000, 0, 2], 500, 1, '', 1000), { next: [1000, 0, 1], ttlMs: 2500 });
    // Spent on the clock behind its start: the previous window's, which holds nothing.
    assert.equal(counter.refund([1000, 0, 2], 500, 1, '', 500), undefined);
  });

  it('a refunded unit can be spent again at once', () => {
    const run = new Run(counter);
    assert.equal(run.burst(0, 6), 5);
    run.state = counter.refund(run.state, 300, 1, '', 300)?.next;
    assert.deepEqual(run.at(300), result(true, 0, 1700, 0));
    assert.equal(run.at(300).allowed, false);
  });
});
