// Envoy's gradient controller: its own unit tests ported (C++ names in the titles), then edge cases, on a manual clock.
//
// Envoy's tests run on simulated time: `advanceTimeAsync` jumps the clock and the next dispatcher run fires each due
// timer once, at the new time. Here a timer fires at its own deadline (as in a live Envoy), so where a C++ test
// samples and then runs the dispatcher, the port samples and then waits out the update interval.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gradient } from '../../src/adaptive/algorithms/gradient.js';
import { type GradientOptions, gradientSettings } from '../../src/adaptive/algorithms/gradient-options.js';
import { mulberry32 as seeded } from '../../src/core/seeded-random.js';
import { throwsConfig } from '../harness/policy-helpers.js';

/** A controller on a clock the test moves (42 h on from its start, as in Envoy's tests), with their defaults. */
function harness(options: GradientOptions = {}) {
  const clock = { now: 0 };
  const algorithm = gradient({
    sampleAggregatePercentile: 50,
    concurrencyUpdateIntervalMs: 100,
    jitter: 0,
    ...(options.fixedMinRttMs === undefined ? { minRttCalcIntervalMs: 30_000 } : {}),
    ...options,
    clock: () => clock.now,
  });
  clock.now = 42 * 3_600_000;
  const sample = (rttMs: number, times = 1) => {
    let limit = 0;
    for (let i = 0; i < times; i++) limit = algorithm.sample({ rttMs, inFlight: 1, dropped: false });
    return limit;
  };
  const advance = (ms: number) => {
    clock.now += ms;
    return algorithm.limit;
  };
  /** Five samples of `rttMs`, then past the next update: the limits after each of `rounds` rounds. */
  const rounds = (rttMs: number, count: number) =>
    Array.from({ length: count }, () => {
      sample(rttMs, 5);
      return advance(101);
    });
  return { algorithm, clock, sample, advance, rounds };
}

describe('gradient: Envoy gradient_controller_test.cc', () => {
  it('GradientControllerConfigTest.BasicTest', () => {
    const settings = gradientSettings({
      sampleAggregatePercentile: 42.5,
      maxConcurrencyLimit: 1337,
      concurrencyUpdateIntervalMs: 123,
      jitter: 13.2,
      minRttCalcIntervalMs: 31_000,
      requestCount: 52,
      minConcurrency: 8,
    });
    assert.equal(settings.minRttIntervalMs, 31_000);
    assert.equal(settings.updateIntervalMs, 123);
    assert.equal(settings.maxLimit, 1337);
    assert.equal(settings.requestCount, 52);
    assert.equal(settings.percentile, 0.425);
    assert.equal(settings.jitter, 0.132);
    assert.equal(settings.minConcurrency, 8);
  });

  it('GradientControllerConfigTest.DefaultValuesTest (and the defaults chosen here)', () => {
    const settings = gradientSettings({});
    assert.equal(settings.minRttIntervalMs, 60_000);
    assert.equal(settings.updateIntervalMs, 100);
    assert.equal(settings.maxLimit, 1000);
    assert.equal(settings.requestCount, 50);
    assert.equal(settings.percentile, 0.5);
    assert.equal(settings.jitter, 0.15);
    assert.equal(settings.minConcurrency, 3);
    assert.equal(settings.buffer, 0.25);
    assert.equal(settings.fixedMinRttMs, undefined);
    assert.equal(settings.random, Math.random);
    const before = performance.now();
    const read = settings.clock();
    assert.ok(read >= before && read <= performance.now());
  });

  it('MinRTTEpoch: requests sent before a measurement began are not sampled in it', () => {
    const { algorithm, sample, advance } = harness({ requestCount: 25, minConcurrency: 2, buffer: 0 });
    assert.equal(advance(1350), 2);
    assert.equal(algorithm.measuringMinRtt, true);
    sample(1350, 26);
    assert.equal(algorithm.measuringMinRtt, false);
    assert.equal(algorithm.rtt.minimum, 1350);
    const limits: number[] = [];
    for (let i = 0; i < 29; i++) {
      advance(900);
      sample(1350);
      limits.push(advance(100));
    }
    assert.deepEqual(limits.slice(0, 6), [4, 6, 8, 10, 13, 16]);
    for (let i = 1; i < limits.length; i++) assert.ok((limits[i] as number) > (limits[i - 1] as number));
    // Past the 30 s interval: measuring again, and round trips of 5 minutes began before it did.
    assert.equal(advance(5000), 2);
    assert.equal(algorithm.measuringMinRtt, true);
    sample(300_000, 40);
    assert.equal(algorithm.measuringMinRtt, true);
    assert.equal(algorithm.limit, 2);
  });

  it('MinRTTLogicTest: pinned to minConcurrency until requestCount round trips are in', () => {
    const { algorithm, sample, advance } = harness({ requestCount: 50, minConcurrency: 7 });
    assert.equal(algorithm.measuringMinRtt, true);
    assert.equal(algorithm.limit, 7);
    advance(13);
    sample(13, 7);
    for (let i = 0; i < 43; i++) {
      assert.equal(algorithm.limit, 7);
      assert.equal(algorithm.measuringMinRtt, true);
      sample(13);
    }
    assert.equal(algorithm.measuringMinRtt, false);
    // The median of 50 round trips of 13 ms, in the [13, 14) ms bucket: 13.5 ms (Envoy's gauge shows 13).
    assert.deepEqual(algorithm.rtt, { minimum: 13.5 });
  });

  it('CancelLatencySample: the minimum is the percentile of the measured round trips', () => {
    const { algorithm, sample } = harness({ requestCount: 5 });
    for (let ms = 1; ms <= 5; ms++) sample(ms);
    assert.deepEqual(algorithm.rtt, { minimum: 3.05 });
  });

  it('MinRTTBufferTest: round trips within the buffer still grow the limit', () => {
    const { algorithm, sample, rounds } = harness({ requestCount: 5, buffer: 50 });
    assert.equal(algorithm.limit, 3);
    sample(5, 6);
    assert.equal(algorithm.rtt.minimum, 5.05);
    assert.deepEqual(rounds(6, 10), [5, 8, 13, 20, 30, 43, 61, 85, 116, 157]);
  });

  it('ConcurrencyLimitBehaviorTestBasic: grows by at most 2x, shrinks by at most half, never below the minimum', () => {
    const { algorithm, sample, advance, rounds } = harness({
      requestCount: 5,
      buffer: 10,
      minConcurrency: 7,
    });
    assert.equal(algorithm.limit, 7);
    sample(5, 6);
    assert.equal(algorithm.rtt.minimum, 5.05);
    // 7 * 1.1 + sqrt(7.7) = 10.47
    assert.equal(advance(101), 10);
    assert.deepEqual(algorithm.rtt, { minimum: 5.05, sampled: 5.05 });
    assert.deepEqual(rounds(4, 10), [17, 28, 44, 68, 102, 151, 221, 320, 459, 654]);
    // 654 * 5.555 / 6.05 + sqrt(of that) = 624.996
    assert.deepEqual(rounds(6, 10), [624, 596, 570, 546, 523, 502, 482, 463, 445, 428]);
    assert.deepEqual(algorithm.rtt, { minimum: 5.05, sampled: 6.05 });
  });

  it('MinRTTReturnToPreviousLimit: the limit comes back after a measurement', () => {
    const { algorithm, sample, advance, rounds } = harness({ requestCount: 5 });
    sample(5, 6);
    advance(1000);
    assert.deepEqual(rounds(4, 5), [10, 19, 35, 61, 104]);
    assert.equal(advance(31_000), 3);
    advance(1000);
    for (let i = 0; i < 5; i++) {
      assert.equal(algorithm.limit, 3);
      sample(13);
    }
    assert.equal(algorithm.limit, 104);
    assert.equal(algorithm.rtt.minimum, 13.5);
  });

  it('MinRTTRescheduleTest: no update during a measurement', () => {
    const { sample, advance, rounds } = harness({ requestCount: 5 });
    sample(5, 6);
    advance(1000);
    rounds(4, 5);
    assert.equal(advance(31_000), 3);
    assert.equal(advance(101), 3);
    sample(1, 4);
    assert.equal(advance(10_000), 3);
  });

  it('NoSamplesTest: without round trips the limit holds', () => {
    const { sample, advance, rounds } = harness({ requestCount: 5 });
    sample(5, 6);
    assert.deepEqual(rounds(4, 5), [6, 12, 23, 41, 71]);
    for (let i = 0; i < 5; i++) assert.equal(advance(101), 71);
  });

  it('TimerAccuracyTest: update every 123 ms; next measurement after the interval plus jitter', () => {
    const { algorithm, sample, advance } = harness({
      concurrencyUpdateIntervalMs: 123,
      jitter: 10,
      minRttCalcIntervalMs: 100_000,
      requestCount: 5,
      // Envoy's test draws 15000 % 10000: 5000 ms of a 10000 ms range.
      random: () => 0.5,
    });
    sample(5, 5);
    sample(4, 5);
    assert.equal(advance(122), 3);
    assert.equal(advance(1), 6);
    advance(105_000 - 124);
    assert.equal(algorithm.measuringMinRtt, false);
    advance(1);
    assert.equal(algorithm.measuringMinRtt, true);
  });

  it('TimerAccuracyTestNoJitter: next measurement exactly one interval after the last', () => {
    const { algorithm, sample, advance } = harness({ minRttCalcIntervalMs: 45_000, requestCount: 5 });
    sample(5, 5);
    advance(44_999);
    assert.equal(algorithm.measuringMinRtt, false);
    advance(1);
    assert.equal(algorithm.measuringMinRtt, true);
  });

  it('ConsecutiveMinConcurrencyReset: five updates in a row at the minimum start a measurement', () => {
    const { algorithm, sample, advance, rounds } = harness({
      minRttCalcIntervalMs: 3_600_000,
      requestCount: 5,
      buffer: 0,
      minConcurrency: 7,
    });
    sample(5, 6);
    assert.equal(advance(101), 9);
    assert.deepEqual(rounds(10, 5), [7, 7, 7, 7, 7]);
    assert.equal(algorithm.measuringMinRtt, false);
    // The fifth update in a row at 7: a measurement starts at once, and now 10 ms is the minimum.
    assert.equal(rounds(10, 1)[0], 7);
    assert.equal(algorithm.measuringMinRtt, true);
    const limits = rounds(10, 10);
    assert.equal(algorithm.rtt.minimum, 10.5);
    // The first round trips began before the measurement did; the next five measure it, then the limit grows.
    assert.deepEqual(limits, [7, 7, 9, 12, 15, 18, 22, 26, 31, 36]);
  });
});

describe('gradient: percentiles as Envoy histogram computes them', () => {
  const minimumOf = (rtts: readonly number[], options: GradientOptions = {}) => {
    const { algorithm, sample } = harness({ requestCount: rtts.length, ...options });
    for (const rtt of rtts) sample(rtt);
    return algorithm.rtt.minimum;
  };

  it('p0 is the first bucket left edge, p100 the last one right edge, between them interpolated', () => {
    assert.equal(minimumOf([1, 2, 3, 4, 5], { sampleAggregatePercentile: 0 }), 1);
    assert.equal(minimumOf([1, 2, 3, 4, 5], { sampleAggregatePercentile: 100 }), 5.1);
    // 2.125 of 5 samples: an eighth into the third one bucket, [3000, 3100) µs, truncated to 3012 µs.
    assert.equal(minimumOf([5, 4, 3, 2, 1], { sampleAggregatePercentile: 42.5 }), 3.012);
    assert.equal(minimumOf([2, 2, 2, 9], { sampleAggregatePercentile: 90 }), 9.06);
    // A target that ends a bucket is that bucket's right edge, not the next one's left.
    assert.equal(minimumOf([1, 2]), 1.1);
  });

  it('buckets are walked in order of value, whatever the order the round trips came in', () => {
    assert.equal(minimumOf([9, 1, 1, 1], { sampleAggregatePercentile: 25 }), 1.033);
    assert.equal(minimumOf([20, 3, 100, 1, 3]), 3.075);
    assert.equal(minimumOf([0.5, 40, 0.02, 7, 300, 0.02, 1]), 1.05);
  });

  it('buckets keep two significant digits at every scale', () => {
    assert.equal(minimumOf([0.005]), 0.005);
    assert.equal(minimumOf([0.0059]), 0.005);
    assert.equal(minimumOf([0.0599]), 0.059);
    assert.equal(minimumOf([4.35]), 4.35);
    assert.equal(minimumOf([99.99]), 99.5);
    assert.equal(minimumOf([100]), 105);
    assert.equal(minimumOf([123_456]), 125_000);
    assert.equal(minimumOf([0]), 0);
    assert.equal(minimumOf([0.0001]), 0);
  });

  it('a round trip is taken in whole ns, then truncated to µs', () => {
    assert.equal(minimumOf([0.0099999999]), 0.01);
    assert.equal(minimumOf([0.0019996]), 0.002);
    assert.equal(minimumOf([0.0019994]), 0.001);
  });
});

describe('gradient: updates', () => {
  it('the gradient is clamped to [0.5, 2] and the limit to [minConcurrency, maxConcurrencyLimit]', () => {
    const { sample, advance, rounds } = harness({ fixedMinRttMs: 10, buffer: 0, minConcurrency: 1 });
    assert.equal(advance(0), 1);
    // Round trips of 1.05 ms against a minimum of 10: the gradient is 2 at most.
    assert.deepEqual(rounds(1, 5), [3, 8, 20, 46, 101]);
    // 101 / 2 + sqrt(50.5) = 57.6: the gradient is 0.5 at least.
    assert.deepEqual(rounds(100, 8), [57, 33, 20, 13, 9, 6, 4, 3]);
    // 2 / 2 + sqrt(1) = 2: halving alone never reaches 1.
    assert.deepEqual(rounds(1000, 3), [2, 2, 2]);
    sample(10, 5);
    // gradient 10 / 10.05: 2 * 0.995 + sqrt(1.99) = 3.4
    assert.equal(advance(101), 3);
  });

  it('the limit stops at maxConcurrencyLimit', () => {
    const { rounds } = harness({ fixedMinRttMs: 10, maxConcurrencyLimit: 10, minConcurrency: 2 });
    assert.deepEqual(rounds(1, 4), [6, 10, 10, 10]);
    const floor = harness({ fixedMinRttMs: 10, minConcurrency: 5 });
    // 5 / 2 + sqrt(2.5) = 4.08, raised to the minimum.
    assert.deepEqual(floor.rounds(1000, 2), [5, 5]);
  });

  it('round trips under 1 µs: 0 / 0 and x / 0 give the largest gradient, as in Envoy', () => {
    const zero = harness({ requestCount: 5, minConcurrency: 4 });
    zero.sample(0, 5);
    assert.equal(zero.algorithm.rtt.minimum, 0);
    assert.deepEqual(zero.rounds(0, 2), [10, 24]);
    assert.deepEqual(zero.algorithm.rtt, { minimum: 0, sampled: 0 });
    const fixed = harness({ fixedMinRttMs: 1, minConcurrency: 4 });
    assert.deepEqual(fixed.rounds(0.0001, 2), [10, 24]);
  });

  it('a fixed minimum: never measured, the limit never pinned', () => {
    const { algorithm, sample, advance, rounds } = harness({ fixedMinRttMs: 20, requestCount: 1 });
    assert.equal(algorithm.measuringMinRtt, false);
    assert.deepEqual(algorithm.rtt, { minimum: 20 });
    assert.equal(sample(10), 3);
    // Many updates at the minimum start no measurement.
    assert.deepEqual(rounds(1000, 8), [3, 3, 3, 3, 3, 3, 3, 3]);
    assert.equal(advance(3_600_000), 3);
    assert.equal(algorithm.measuringMinRtt, false);
    assert.deepEqual(algorithm.rtt, { minimum: 20, sampled: 1050 });
  });

  it('a jump over several intervals updates once, and keeps the timer on its beat', () => {
    const { algorithm, clock, sample, advance } = harness({ fixedMinRttMs: 10, buffer: 0 });
    const start = clock.now;
    advance(50);
    sample(5, 5);
    // Due at +100: one update from these round trips (3 * 1.98 + 2.44), none from the empty windows after.
    assert.equal(advance(300), 8);
    sample(5, 5);
    // The next update is at +400, on the beat.
    assert.equal(advance(49), 8);
    assert.equal(advance(1), 19);
    assert.equal(clock.now, start + 400);
    sample(5, 5);
    assert.equal(advance(299), 43);
    // At +699: the update at +500 is past; the next, at +700, takes this round trip.
    sample(5);
    assert.equal(advance(1), 94);
    assert.equal(algorithm.rtt.sampled, 5.05);
  });

  it('a long idle spell then a measurement: the timers keep to their deadlines', () => {
    const { algorithm, clock, sample, advance } = harness({ requestCount: 5, minRttCalcIntervalMs: 1000 });
    sample(5, 5);
    const measured = clock.now;
    sample(5, 5);
    // The update due at +100 finds the round trips; the measurement starts at +1000; the update timer gives up.
    assert.equal(advance(950), 5);
    assert.equal(algorithm.measuringMinRtt, false);
    assert.equal(advance(50), 3);
    assert.equal(algorithm.measuringMinRtt, true);
    advance(500_000);
    sample(5, 5);
    assert.equal(algorithm.limit, 5);
    // Armed again by the measurement's end: due 100 ms after it.
    sample(5, 5);
    assert.equal(advance(99), 5);
    assert.equal(advance(1), 8);
    assert.equal(clock.now, measured + 501_100);
  });

  it('a measurement and an update due together: the measurement first, the update then gives up', () => {
    const { algorithm, sample, advance } = harness({ requestCount: 5, minRttCalcIntervalMs: 1000 });
    sample(5, 5);
    advance(950);
    sample(1, 5);
    assert.equal(advance(50), 3);
    assert.equal(algorithm.measuringMinRtt, true);
    advance(10);
    sample(5, 5);
    // The round trips before the measurement were thrown away: the limit is back where it was, 3.
    assert.equal(algorithm.limit, 3);
    assert.equal(algorithm.rtt.sampled, undefined);
  });

  it('an update due before a measurement, caught up together with it, comes first', () => {
    const { algorithm, sample, advance } = harness({ requestCount: 5, minRttCalcIntervalMs: 1000 });
    sample(5, 5);
    sample(5, 5);
    // One read past both: the update at +100 (3 to 5), then the measurement at +1000.
    assert.equal(advance(1000), 3);
    advance(10);
    sample(5, 5);
    assert.equal(algorithm.limit, 5);
  });

  it('jitter: a seeded draw of up to `jitter` percent of the interval, in whole ms', () => {
    const draws = seeded(42);
    const expected = seeded(42);
    const { algorithm, clock, sample, advance } = harness({
      requestCount: 1,
      minRttCalcIntervalMs: 10_001,
      jitter: 30,
      random: draws,
    });
    for (let i = 0; i < 5; i++) {
      // A round trip that began after the measurement did.
      advance(10);
      sample(5);
      const wait = 10_001 + Math.floor(expected() * 3001);
      const from = clock.now;
      advance(wait - 1);
      assert.equal(algorithm.measuringMinRtt, false, `draw ${i}`);
      advance(1);
      assert.equal(algorithm.measuringMinRtt, true, `draw ${i}`);
      assert.equal(clock.now - from, wait);
    }
    const top = harness({ requestCount: 1, minRttCalcIntervalMs: 1000, jitter: 100, random: () => 0.9999 });
    top.sample(5);
    // 1000 + floor(0.9999 * 1000): the draw stays below the interval's whole jitter.
    top.advance(1998);
    assert.equal(top.algorithm.measuringMinRtt, false);
    top.advance(1);
    assert.equal(top.algorithm.measuringMinRtt, true);
  });

  it('after a measurement the five-in-a-row count starts over; an update off the minimum resets it', () => {
    const { algorithm, sample, advance, rounds } = harness({
      minRttCalcIntervalMs: 3_600_000,
      requestCount: 5,
      buffer: 0,
      minConcurrency: 7,
    });
    sample(5, 6);
    advance(101);
    // From 9 to 7, then four in a row at 7.
    assert.deepEqual(rounds(10, 5), [7, 7, 7, 7, 7]);
    // 7 + sqrt(7): off the minimum, so the four in a row count for nothing.
    assert.deepEqual(rounds(5, 1), [9]);
    assert.equal(algorithm.measuringMinRtt, false);
    // Back to 7 (not yet in a row), then four in a row.
    assert.deepEqual(rounds(20, 5), [7, 7, 7, 7, 7]);
    assert.equal(algorithm.measuringMinRtt, false);
    assert.deepEqual(rounds(20, 1), [7]);
    assert.equal(algorithm.measuringMinRtt, true);
    advance(10);
    sample(5, 5);
    assert.equal(algorithm.measuringMinRtt, false);
    assert.deepEqual(rounds(20, 4), [7, 7, 7, 7]);
    assert.equal(algorithm.measuringMinRtt, false);
    assert.deepEqual(rounds(20, 1), [7]);
    assert.equal(algorithm.measuringMinRtt, true);
  });

  it('a request sent the moment a measurement began counts in it', () => {
    const { algorithm, sample, advance } = harness({ requestCount: 1, minRttCalcIntervalMs: 1000 });
    sample(5);
    advance(1000);
    assert.equal(algorithm.measuringMinRtt, true);
    advance(5);
    sample(5.001);
    assert.equal(algorithm.measuringMinRtt, true);
    sample(5);
    assert.equal(algorithm.measuringMinRtt, false);
  });

  it('no jitter draws nothing', () => {
    const { algorithm, sample, advance } = harness({
      requestCount: 1,
      random: () => assert.fail('no draw without jitter'),
    });
    sample(5);
    advance(30_000);
    assert.equal(algorithm.measuringMinRtt, true);
  });

  it('sample returns the limit after it; drops and inFlight are ignored', () => {
    const { algorithm, sample } = harness({ requestCount: 2 });
    assert.deepEqual(algorithm.rtt, {});
    assert.equal(sample(5), 3);
    assert.equal(algorithm.sample({ rttMs: 5, inFlight: 1000, dropped: true }), 3);
    assert.equal(algorithm.measuringMinRtt, false);
    assert.equal(algorithm.name, 'gradient');
    assert.deepEqual(algorithm.rtt, { minimum: 5.05 });
  });
});

describe('gradient: options beyond Envoy (off by default)', () => {
  const inFlight = (algorithm: ReturnType<typeof gradient>, rttMs: number, counts: readonly number[]) => {
    for (const count of counts) algorithm.sample({ rttMs, inFlight: count, dropped: false });
  };

  it('capToDemand: a rise goes to at most twice the most requests in flight during the interval', () => {
    const { algorithm, advance } = harness({ fixedMinRttMs: 10, capToDemand: true });
    inFlight(algorithm, 1, [1, 2, 1]);
    // 3 * 2 + sqrt(6) = 8, held to 2 * 2.
    assert.equal(advance(101), 4);
    inFlight(algorithm, 1, [1, 5, 2]);
    assert.equal(advance(101), 10);
    // A low peak never lowers the limit.
    inFlight(algorithm, 1, [1]);
    assert.equal(advance(101), 10);
    // Counted afresh each interval.
    inFlight(algorithm, 1, [20]);
    assert.equal(advance(101), 24);
    // A fall is not held back: 24 / 2 + sqrt(12).
    inFlight(algorithm, 1000, [1]);
    assert.equal(advance(101), 15);
  });

  it('without capToDemand, requests in flight count for nothing', () => {
    const { algorithm, advance } = harness({ fixedMinRttMs: 10 });
    inFlight(algorithm, 1, [1, 2, 1]);
    assert.equal(advance(101), 8);
  });

  it('remeasureWhenFaster: updates shorter than the minimum by more than the buffer hold the limit, five in a row measure it again', () => {
    const { algorithm, sample, advance } = harness({ requestCount: 5, remeasureWhenFaster: true });
    sample(5, 5);
    assert.equal(algorithm.rtt.minimum, 5.05);
    const faster = (updates: number) => {
      for (let i = 0; i < updates; i++) {
        sample(3, 5);
        advance(100);
      }
    };
    faster(4);
    assert.equal(algorithm.measuringMinRtt, false);
    // Each of them held the limit, where a gradient of 2 would have raised it (3 * 2 + sqrt(6) = 8).
    assert.equal(algorithm.limit, 3);
    // 4.04 ms * 1.25 is exactly 5.05 ms: not shorter by more than the buffer, which ends the streak.
    sample(3);
    sample(4, 5);
    advance(100);
    assert.equal(algorithm.rtt.sampled, 4.04);
    // Risen as Envoy would: 3 * 1.5625 + sqrt(4.6875), truncated.
    assert.equal(algorithm.limit, 6);
    faster(4);
    assert.equal(algorithm.measuringMinRtt, false);
    assert.equal(algorithm.limit, 6);
    faster(1);
    assert.equal(algorithm.measuringMinRtt, true);
    assert.equal(algorithm.limit, 3);
    advance(10);
    sample(3, 5);
    assert.deepEqual(algorithm.rtt, { minimum: 3.05, sampled: 3.05 });
    assert.equal(algorithm.limit, 6);
  });

  it('remeasureWhenFaster does nothing by default, nor with a fixed minimum', () => {
    const plain = harness({ requestCount: 5 });
    plain.sample(5, 5);
    plain.sample(1, 5);
    plain.advance(100);
    assert.equal(plain.algorithm.measuringMinRtt, false);
    const fixed = harness({ fixedMinRttMs: 10, remeasureWhenFaster: true });
    fixed.sample(1, 5);
    fixed.advance(100);
    assert.equal(fixed.algorithm.measuringMinRtt, false);
    assert.deepEqual(fixed.algorithm.rtt, { minimum: 10, sampled: 1.05 });
  });

  it('the flags must be booleans', () => {
    throwsConfig(() => gradient({ capToDemand: 'yes' as unknown as boolean }), 'capToDemand');
    throwsConfig(() => gradient({ remeasureWhenFaster: 1 as unknown as boolean }), 'remeasureWhenFaster');
    assert.throws(
      () => gradient({ capToDemand: null as unknown as boolean }),
      /`capToDemand` must be a boolean/,
    );
    assert.equal(gradient({ capToDemand: false, remeasureWhenFaster: false }).limit, 3);
  });
});

describe('gradient: options', () => {
  it('rejects each bad option by name', () => {
    const bad: [GradientOptions, string][] = [
      [{ sampleAggregatePercentile: 101 }, 'sampleAggregatePercentile'],
      [{ sampleAggregatePercentile: -1 }, 'sampleAggregatePercentile'],
      [{ sampleAggregatePercentile: Number.NaN }, 'sampleAggregatePercentile'],
      [{ jitter: '15' as unknown as number }, 'jitter'],
      [{ buffer: 100.5 }, 'buffer'],
      [{ maxConcurrencyLimit: 0 }, 'maxConcurrencyLimit'],
      [{ maxConcurrencyLimit: 2, minConcurrency: 3 }, 'maxConcurrencyLimit'],
      [{ minConcurrency: 1.5 }, 'minConcurrency'],
      [{ concurrencyUpdateIntervalMs: 0 }, 'concurrencyUpdateIntervalMs'],
      [{ minRttCalcIntervalMs: 2 ** 31 }, 'minRttCalcIntervalMs'],
      [{ fixedMinRttMs: 10, minRttCalcIntervalMs: 1000 }, 'minRttCalcIntervalMs'],
      [{ fixedMinRttMs: 0 }, 'fixedMinRttMs'],
      [{ requestCount: 0 }, 'requestCount'],
      [{ clock: 5 as unknown as () => number }, 'clock'],
      [{ random: 'x' as unknown as () => number }, 'random'],
      [{ interval: 1000 } as GradientOptions, 'interval'],
      [{ minRttCalcIntervalMS: 1000 } as GradientOptions, 'minRttCalcIntervalMS'],
      [null as unknown as GradientOptions, 'options'],
      ['x' as unknown as GradientOptions, 'options'],
    ];
    for (const [options, option] of bad) throwsConfig(() => gradient(options), option);
  });

  it('points from the names Envoy and the other algorithms use to this one', () => {
    const advice: Record<string, RegExp> = {
      concurrencyUpdateInterval: /write `concurrencyUpdateIntervalMs`, in ms/,
      interval: /write `minRttCalcIntervalMs`, in ms/,
      minRttCalcInterval: /write `minRttCalcIntervalMs`, in ms/,
      fixedValue: /write `fixedMinRttMs`, in ms/,
      minRttBuffer: /write `buffer`, a percent/,
      maxConcurrency: /Envoy calls it `maxConcurrencyLimit`/,
      minLimit: /Envoy calls it `minConcurrency`/,
      initialLimit: /the limit starts at `minConcurrency`, measuring the minimum round trip/,
    };
    for (const [key, message] of Object.entries(advice)) {
      assert.throws(() => gradient({ [key]: 1 } as GradientOptions), message);
      assert.throws(() => gradient({ [key]: 1 } as GradientOptions), /is not an option of gradient\(\)/);
    }
    assert.throws(() => gradient(null as unknown as GradientOptions), /`options` must be an object/);
  });

  it('names the option meant', () => {
    assert.throws(() => gradient({ fixedValue: 5 } as GradientOptions), /write `fixedMinRttMs`, in ms/);
    assert.throws(() => gradient({ minConcurency: 5 } as GradientOptions), /did you mean `minConcurrency`\?/);
    assert.throws(
      () => gradient({ fixedMinRttMs: 10, minRttCalcIntervalMs: 10 }),
      /cannot be combined with `fixedMinRttMs`/,
    );
    assert.throws(
      () => gradient({ minConcurrency: 9, maxConcurrencyLimit: 8 }),
      /at least `minConcurrency` \(9\)/,
    );
    assert.throws(() => gradient({ buffer: 101 }), /must be a percent, from 0 to 100/);
  });

  it('takes the boundaries: percents of 0 and 100, a minimum equal to the maximum', () => {
    const { algorithm, rounds } = harness({
      fixedMinRttMs: 1,
      sampleAggregatePercentile: 100,
      buffer: 100,
      jitter: 100,
      minConcurrency: 5,
      maxConcurrencyLimit: 5,
    });
    assert.deepEqual(rounds(1, 2), [5, 5]);
    assert.equal(algorithm.rtt.sampled, 1.1);
    assert.equal(gradient().limit, 3);
  });
});
