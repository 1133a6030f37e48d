// Unit tests of Gradient2: exact limits and averages, each expectation computed by Netflix's Java arithmetic.
//
// Netflix's repository has no Gradient2LimitTest; its ExpAvgMeasurementTest is ported below, and every other
// expected value here was produced by the reference's `_update` and ExpAvgMeasurement run on the same integer
// round trips (ns there, ms here: the arithmetic is the same on the same numbers).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LimitAlgorithm } from '../../src/adaptive/algorithms/algorithm.js';
import { ExpAvgMeasurement } from '../../src/adaptive/algorithms/exp-avg-measurement.js';
import { type Gradient2Options, gradient2 } from '../../src/adaptive/algorithms/gradient2.js';
import { TollgateError } from '../../src/core/errors.js';

/** Feeds `[rttMs, inFlight]` pairs; returns the limit after each. */
function run(algorithm: LimitAlgorithm, samples: readonly (readonly [number, number])[], dropped = false) {
  return samples.map(([rttMs, inFlight]) => algorithm.sample({ rttMs, inFlight, dropped }));
}

/** `count` samples of one round trip and one in-flight count. */
const repeat = (count: number, rttMs: number, inFlight: number) =>
  Array.from({ length: count }, () => [rttMs, inFlight] as const);

function throwsConfig(fn: () => unknown, option: string, message: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof TollgateError);
    assert.equal(error.code, 'ERR_TOLLGATE_CONFIG');
    assert.equal(error.option, option);
    assert.match(error.message, message);
    return true;
  });
}

describe('ExpAvgMeasurement', () => {
  it('testWarmup (ExpAvgMeasurementTest): the first 10 samples are averaged, then 2 / (window + 1)', () => {
    const avg = new ExpAvgMeasurement(100, 10);
    assert.equal(avg.value, 0);
    const expected = [10, 10.5, 11, 11.5, 12, 12.5, 13, 13.5, 14, 14.5];
    for (let i = 0; i < 10; i++) {
      assert.equal(avg.add(i + 10), expected[i]);
      assert.equal(avg.value, expected[i]);
    }
    // The reference asserts 16.2 within 0.1: 14.5 * 99/101 + 100 * 2/101.
    assert.equal(avg.add(100), 16.193069306930695);
  });

  it('scale() is undone by the next warm-up sample, and kept after warm-up', () => {
    const avg = new ExpAvgMeasurement(3, 2);
    avg.add(10);
    avg.scale(0.5);
    assert.equal(avg.value, 5);
    assert.equal(avg.add(20), 15);
    avg.scale(0.5);
    assert.equal(avg.add(20), 13.75);
  });
});

describe('gradient2: reference arithmetic', () => {
  it('newDefault: limit 20, no round trips known, named gradient2', () => {
    const algorithm = gradient2();
    assert.equal(algorithm.name, 'gradient2');
    assert.equal(algorithm.limit, 20);
    assert.deepEqual(algorithm.rtt, {});
  });

  it('steady round trips grow the limit by smoothing x queueSize (0.8) per sample, truncated', () => {
    const algorithm = gradient2();
    assert.deepEqual(run(algorithm, repeat(3, 10, 20)), [20, 21, 22]);
    assert.equal(algorithm.limit, 22);
    assert.deepEqual(algorithm.rtt, { short: 10, long: 10 });
  });

  it('a round trip 10x the average: gradient floored at 0.5, limit 108 -> 98 -> 89', () => {
    const algorithm = gradient2({ initialLimit: 100, minLimit: 10 });
    const limits = run(algorithm, [...repeat(10, 10, 100), ...repeat(2, 100, 100)]);
    assert.deepEqual(limits, [100, 101, 102, 103, 104, 104, 105, 106, 107, 108, 98, 89]);
    assert.deepEqual(algorithm.rtt, { short: 100, long: 10.59800498891199 });
  });

  it('a round trip twice the average: gradient 1.5 x 10.033 / 20, limit 108 -> 104', () => {
    const algorithm = gradient2({ initialLimit: 100, minLimit: 10 });
    const limits = run(algorithm, [...repeat(11, 10, 100), [20, 100]]);
    assert.deepEqual(limits.slice(-2), [108, 104]);
    assert.deepEqual(algorithm.rtt, { short: 20, long: 10.033277870216306 });
    assert.deepEqual(run(algorithm, [[10, 100]]), [105]);
  });

  it('rttTolerance 1: an average of 20 against 30 gives gradient 2/3, limit 100.8 -> 94.88', () => {
    const algorithm = gradient2({ initialLimit: 100, minLimit: 10, rttTolerance: 1 });
    assert.deepEqual(
      run(algorithm, [
        [10, 100],
        [30, 100],
        [20, 100],
      ]),
      [100, 94, 95],
    );
  });

  it('rttTolerance 1.5: a round trip 1.33x the average counts as no queueing', () => {
    const algorithm = gradient2({ initialLimit: 100, minLimit: 10 });
    assert.deepEqual(
      run(algorithm, [
        [10, 100],
        [20, 100],
        [20, 100],
      ]),
      [100, 101, 102],
    );
  });

  it('app-limited: fewer than half the limit in flight holds it; exactly half does not', () => {
    const algorithm = gradient2();
    assert.deepEqual(
      run(algorithm, [
        [10, 9],
        [10, 10],
        [10, 10],
        [10, 11],
      ]),
      [20, 20, 20, 21],
    );
  });

  it('the round trips of an app-limited sample are still averaged', () => {
    const algorithm = gradient2();
    run(algorithm, [
      [10, 0],
      [30, 0],
    ]);
    assert.deepEqual(algorithm.rtt, { short: 30, long: 20 });
    assert.equal(algorithm.limit, 20);
  });

  it('long > 2x short after warm-up: the average is scaled by 0.95 each time', () => {
    const algorithm = gradient2({ initialLimit: 100, minLimit: 10 });
    run(algorithm, [...repeat(10, 100, 0), [10, 0]]);
    assert.deepEqual(algorithm.rtt, { short: 10, long: 94.71547420965058 });
    run(algorithm, [[10, 0]]);
    assert.deepEqual(algorithm.rtt, { short: 10, long: 89.7118811963422 });
    assert.equal(algorithm.limit, 100);
  });

  it('during warm-up the decay shows until the next sample recomputes the plain average', () => {
    const algorithm = gradient2();
    run(algorithm, [
      [31, 0],
      [10, 0],
    ]);
    assert.deepEqual(algorithm.rtt, { short: 10, long: 19.474999999999998 });
    run(algorithm, [[20, 0]]);
    assert.deepEqual(algorithm.rtt, { short: 20, long: 20.333333333333332 });
  });

  it('long exactly 2x short is no decay', () => {
    const algorithm = gradient2();
    run(algorithm, [
      [30, 0],
      [10, 0],
    ]);
    assert.deepEqual(algorithm.rtt, { short: 10, long: 20 });
  });

  it('the decayed average is what the next sample averages into', () => {
    const algorithm = gradient2({ longWindow: 1 });
    run(algorithm, [...repeat(10, 100, 0), [10, 0]]);
    // Window 1 weighs the latest sample fully: 10, not above 2x, so no decay.
    assert.deepEqual(algorithm.rtt, { short: 10, long: 10 });
    run(algorithm, [
      [50, 0],
      [30, 0],
    ]);
    assert.deepEqual(algorithm.rtt, { short: 30, long: 30 });
  });

  it('maxConcurrency caps the limit', () => {
    const algorithm = gradient2({ maxConcurrency: 21 });
    assert.deepEqual(run(algorithm, repeat(3, 10, 20)), [20, 21, 21]);
  });

  it('minLimit floors the limit', () => {
    const algorithm = gradient2({ initialLimit: 100, minLimit: 100 });
    const limits = run(algorithm, [...repeat(10, 10, 100), [100, 100]]);
    assert.deepEqual(limits.slice(-2), [108, 100]);
  });

  it('an initial limit below minLimit holds while app-limited, then is lifted', () => {
    const low = gradient2({ initialLimit: 5 });
    assert.equal(low.limit, 5);
    assert.deepEqual(
      run(low, [
        [10, 2],
        [10, 5],
      ]),
      [5, 20],
    );
  });

  it('smoothing 1 takes the estimate whole', () => {
    assert.deepEqual(run(gradient2({ smoothing: 1 }), repeat(3, 10, 20)), [24, 28, 32]);
  });

  it('queueSize as a function gets the truncated limit, on every sample', () => {
    const seen: number[] = [];
    const algorithm = gradient2({
      initialLimit: 40,
      minLimit: 1,
      queueSize: (limit) => {
        seen.push(limit);
        return Math.trunc(limit / 4);
      },
    });
    assert.deepEqual(run(algorithm, [...repeat(3, 10, 40), [10, 0]]), [42, 44, 46, 46]);
    assert.deepEqual(seen, [40, 42, 44, 46]);
  });

  it('queueSize 0 (or a function answering 0): a steady round trip holds the limit', () => {
    assert.deepEqual(run(gradient2({ queueSize: 0 }), repeat(2, 10, 20)), [20, 20]);
    assert.deepEqual(run(gradient2({ queueSize: () => 0 }), repeat(2, 10, 20)), [20, 20]);
  });

  it('a round trip of 0 after others: the average decays and the gradient is 1', () => {
    const algorithm = gradient2();
    assert.deepEqual(
      run(algorithm, [
        [10, 20],
        [0, 20],
      ]),
      [20, 21],
    );
    assert.deepEqual(algorithm.rtt, { short: 0, long: 4.75 });
  });

  it('round trips of 0 only (a coarse clock): gradient 1, where the reference would be stuck at NaN', () => {
    const algorithm = gradient2();
    assert.deepEqual(run(algorithm, repeat(2, 0, 20)), [20, 21]);
    assert.deepEqual(algorithm.rtt, { short: 0, long: 0 });
  });
});

describe('gradient2: backoffOnDrop', () => {
  it('off (default): a dropped sample counts as any other, as in the reference', () => {
    const algorithm = gradient2({ initialLimit: 100, minLimit: 10 });
    assert.deepEqual(run(algorithm, repeat(3, 10, 100), true), [100, 101, 102]);
    assert.deepEqual(algorithm.rtt, { short: 10, long: 10 });
  });

  it('0.9: each drop multiplies the unrounded limit, its round trip not averaged', () => {
    const algorithm = gradient2({ initialLimit: 100, minLimit: 10, backoffOnDrop: 0.9 });
    assert.deepEqual(run(algorithm, repeat(4, 500, 100), true), [90, 81, 72, 65]);
    assert.equal(algorithm.limit, 65);
    assert.deepEqual(algorithm.rtt, {});
    // 65.61 after a steady sample: 65.61 * 0.8 + (65.61 + 4) * 0.2.
    assert.deepEqual(run(algorithm, [[10, 100]]), [66]);
    assert.deepEqual(algorithm.rtt, { short: 10, long: 10 });
  });

  it('a drop backs off even when app-limited, and does not ask queueSize', () => {
    let asked = 0;
    const queueSize = () => {
      asked++;
      return 4;
    };
    const algorithm = gradient2({ initialLimit: 100, minLimit: 10, backoffOnDrop: 0.5, queueSize });
    assert.deepEqual(run(algorithm, [[10, 0]], true), [50]);
    assert.equal(asked, 0);
  });

  it('never below minLimit', () => {
    assert.deepEqual(run(gradient2({ backoffOnDrop: 0.9 }), [[10, 20]], true), [20]);
  });

  it('a sample that is not dropped follows the reference', () => {
    const algorithm = gradient2({ backoffOnDrop: 0.9 });
    assert.deepEqual(run(algorithm, repeat(3, 10, 20)), [20, 21, 22]);
  });
});

describe('gradient2: options', () => {
  it('takes every option of the reference builder, camelCase', () => {
    const options: Required<Gradient2Options> = {
      initialLimit: 10,
      minLimit: 5,
      maxConcurrency: 50,
      smoothing: 0.5,
      queueSize: 2,
      rttTolerance: 2,
      longWindow: 100,
      backoffOnDrop: 0.5,
    };
    const algorithm = gradient2(options);
    assert.equal(algorithm.limit, 10);
    // 10 * 0.5 + (10 + 2) * 0.5 = 11; then a drop halves it.
    assert.deepEqual(run(algorithm, [[10, 10]]), [11]);
    assert.deepEqual(run(algorithm, [[10, 10]], true), [5]);
  });

  it('accepts the boundaries', () => {
    assert.equal(gradient2({ minLimit: 7, maxConcurrency: 7, initialLimit: 7 }).limit, 7);
    assert.deepEqual(run(gradient2({ smoothing: 1, rttTolerance: 1 }), [[10, 20]]), [24]);
    assert.deepEqual(run(gradient2({ initialLimit: 40, backoffOnDrop: 0.5 }), [[10, 0]], true), [20]);
  });

  it('rejects limits that are not positive integers', () => {
    for (const option of ['initialLimit', 'minLimit', 'maxConcurrency', 'longWindow'] as const) {
      for (const bad of [0, 1.5, '20']) {
        throwsConfig(
          () => gradient2({ [option]: bad } as Gradient2Options),
          option,
          /must be a positive integer/,
        );
      }
    }
  });

  it('rejects initialLimit above maxConcurrency', () => {
    throwsConfig(
      () => gradient2({ initialLimit: 201 }),
      'initialLimit',
      /^`initialLimit` must be at most `maxConcurrency` \(200\) \(received 201\)/,
    );
  });

  it('rejects minLimit above maxConcurrency', () => {
    throwsConfig(
      () => gradient2({ minLimit: 201 }),
      'minLimit',
      /^`minLimit` must be at most `maxConcurrency` \(200\) \(received 201\)/,
    );
  });

  it('rejects smoothing outside (0, 1]', () => {
    for (const bad of [0, 1.000001, Number.NaN, '0.5']) {
      throwsConfig(
        () => gradient2({ smoothing: bad as number }),
        'smoothing',
        /^`smoothing` must be a number in \(0, 1\] \(received/,
      );
    }
  });

  it('rejects rttTolerance below 1 or infinite', () => {
    for (const bad of [0.999, Number.POSITIVE_INFINITY, Number.NaN, '1.5']) {
      throwsConfig(
        () => gradient2({ rttTolerance: bad as number }),
        'rttTolerance',
        /^`rttTolerance` must be a number in \[1, Infinity\) \(received/,
      );
    }
  });

  it('rejects backoffOnDrop outside [0.5, 1)', () => {
    for (const bad of [0.49, 1, Number.NaN, '0.9']) {
      throwsConfig(
        () => gradient2({ backoffOnDrop: bad as number }),
        'backoffOnDrop',
        /^`backoffOnDrop` must be a number in \[0\.5, 1\) \(received/,
      );
    }
  });

  it('rejects a queueSize that is not a non-negative integer or a function', () => {
    for (const bad of [-1, 1.5, '4']) {
      throwsConfig(
        () => gradient2({ queueSize: bad as number }),
        'queueSize',
        /must be a non-negative integer/,
      );
    }
  });

  it("rejects a queueSize function's answer that is not a non-negative integer, when it comes", () => {
    for (const bad of [-1, 1.5, '4', Number.NaN]) {
      const algorithm = gradient2({ queueSize: () => bad as number });
      throwsConfig(
        () => algorithm.sample({ rttMs: 10, inFlight: 20, dropped: false }),
        'queueSize',
        /^`queueSize` must return a non-negative integer \(received/,
      );
    }
  });

  it('rejects options that are not an object', () => {
    throwsConfig(() => gradient2(null as unknown as Gradient2Options), 'options', /must be an object/);
    throwsConfig(() => gradient2(5 as unknown as Gradient2Options), 'options', /must be an object/);
  });

  it('rejects unknown options, naming the nearest, and says where the other names went', () => {
    throwsConfig(
      () => gradient2({ smoothng: 0.2 } as Gradient2Options),
      'smoothng',
      /is not an option of gradient2\(\); did you mean `smoothing`\?/,
    );
    const elsewhere = {
      maxLimit: 'Gradient2 calls it `maxConcurrency`',
      shortWindow: 'the short round trip is the latest sample',
      driftMultiplier: 'the reference no longer uses it',
      metricRegistry: 'read `limit` and `rtt` instead',
      backoffRatio: 'Gradient2 calls it `backoffOnDrop`',
    };
    for (const [option, advice] of Object.entries(elsewhere)) {
      assert.throws(
        () => gradient2({ [option]: 1 } as Gradient2Options),
        (error: TollgateError) =>
          error.message.startsWith(`\`${option}\` is not an option of gradient2() (${advice})`),
      );
    }
  });
});
