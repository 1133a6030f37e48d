// Unit tests of the Vegas limit: the reference's own cases (VegasLimitTest), then each branch, the probe and options.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Random } from '../../src/adaptive/algorithms/algorithm.js';
import { type VegasOptions, vegas } from '../../src/adaptive/algorithms/vegas.js';
import { mulberry32 } from '../../src/core/seeded-random.js';
import { pointed } from '../harness/error-pointer.js';

const ok = (rttMs: number, inFlight: number) => ({ rttMs, inFlight, dropped: false });
const drop = (rttMs: number, inFlight: number) => ({ rttMs, inFlight, dropped: true });

/** A random source that returns `values` in turn (then the last again), counting its calls. */
function scripted(...values: number[]): Random & { calls: number } {
  const random = Object.assign(() => values[Math.min(random.calls++, values.length - 1)] as number, {
    calls: 0,
  });
  return random;
}

/** The reference test's `create()`: alpha 3, beta 6, no smoothing, from 10 up to 20. */
const create = () =>
  vegas({ alpha: 3, beta: 6, smoothing: 1, initialLimit: 10, maxConcurrency: 20, random: mulberry32(1) });

/** Asserts `fn` throws a configuration error for `option` with exactly `message`, then the pointer to its code. */
function refuses(fn: () => unknown, option: string, message: string): void {
  assert.throws(fn, {
    name: 'TollgateError',
    code: 'ERR_TOLLGATE_CONFIG',
    option,
    message: pointed(message),
  });
}

describe('vegas: the reference cases (VegasLimitTest)', () => {
  it('initialLimit: starts at its initial limit', () => {
    assert.equal(create().limit, 10);
  });

  it('largeLimitIncrease: no queue at 10000 adds beta, 6 x log10 = 24', () => {
    const limit = vegas({ initialLimit: 10000, maxConcurrency: 20000, random: mulberry32(2) });
    assert.equal(limit.sample(ok(10_000, 5000)), 10000);
    assert.equal(limit.sample(ok(10_000, 6000)), 10024);
  });

  it('increaseLimit: the first sample sets the no-load rtt, the next with no queue adds beta', () => {
    const limit = create();
    assert.equal(limit.sample(ok(10, 10)), 10);
    assert.equal(limit.sample(ok(10, 11)), 16);
    assert.equal(limit.limit, 16);
  });

  it('decreaseLimit: a queue above beta decreases by log10', () => {
    const limit = create();
    assert.equal(limit.sample(ok(10, 10)), 10);
    assert.equal(limit.sample(ok(50, 11)), 9);
  });

  it('noChangeIfWithinThresholds: a queue from alpha to beta leaves the limit', () => {
    const limit = create();
    assert.equal(limit.sample(ok(10, 10)), 10);
    assert.equal(limit.sample(ok(14, 14)), 10);
  });

  it('decreaseSmoothing: half of each decrease is taken, the fraction kept inside', () => {
    const limit = vegas({
      decrease: (current) => current / 2,
      smoothing: 0.5,
      initialLimit: 100,
      maxConcurrency: 200,
    });
    assert.equal(limit.sample(ok(10, 100)), 100);
    assert.equal(limit.sample(ok(20, 100)), 75);
    assert.equal(limit.sample(ok(20, 100)), 56);
  });

  it('decreaseWithoutSmoothing: each decrease is taken whole', () => {
    const limit = vegas({ decrease: (current) => current / 2, initialLimit: 100, maxConcurrency: 200 });
    assert.equal(limit.sample(ok(10, 100)), 100);
    assert.equal(limit.sample(ok(20, 100)), 50);
    assert.equal(limit.sample(ok(20, 100)), 25);
  });
});

/** A limit of `initialLimit` whose no-load rtt is 10 ms already; probing far off. */
function measured(options: VegasOptions) {
  const limit = vegas({ maxConcurrency: 1000, random: scripted(0), ...options });
  limit.sample(ok(10, 0));
  return limit;
}

describe('vegas: the queue estimate and its branches', () => {
  it('reports its name, and its no-load rtt once it has one', () => {
    const limit = vegas();
    assert.equal(limit.name, 'vegas');
    assert.equal(limit.limit, 20);
    assert.deepEqual(limit.rtt, {});
    assert.equal(limit.sample(ok(10, 20)), 20);
    assert.deepEqual(limit.rtt, { noLoad: 10 });
  });

  it('takes a lower rtt as the new no-load one, changing nothing else', () => {
    const limit = measured({ initialLimit: 10 });
    assert.equal(limit.sample(ok(9.5, 10)), 10);
    assert.deepEqual(limit.rtt, { noLoad: 9.5 });
    assert.equal(limit.sample(ok(9.5, 10)), 16);
    assert.deepEqual(limit.rtt, { noLoad: 9.5 });
  });

  it('ignores a round trip of 0 or less (the reference throws), counting no probe', () => {
    const random = scripted(0);
    const limit = vegas({ initialLimit: 1, probeMultiplier: 1, random });
    assert.equal(limit.sample(ok(0, 1)), 1);
    assert.equal(limit.sample(ok(-1, 1)), 1);
    assert.deepEqual(limit.rtt, {});
    assert.equal(random.calls, 1);
  });

  it('with explicit alpha 3, beta 6, threshold 1 at 10: +beta, increase, hold, hold, decrease', () => {
    const at = (rttMs: number) =>
      measured({ initialLimit: 10, alpha: 3, beta: 6, threshold: 1 }).sample(ok(rttMs, 10));
    assert.equal(at(11), 16); // queue 1: at most the threshold
    assert.equal(at(12), 11); // queue 2: below alpha
    assert.equal(at(14), 10); // queue 3: alpha
    assert.equal(at(24), 10); // queue 6: beta
    assert.equal(at(30), 9); // queue 7: above beta
  });

  it('with the defaults at 100 (alpha 6, beta 12, threshold 2): the same five regions', () => {
    const at = (rttMs: number) => measured({ initialLimit: 100 }).sample(ok(rttMs, 50));
    assert.equal(at(10.15), 112); // queue 2
    assert.equal(at(10.3), 102); // queue 3
    assert.equal(at(10.58), 100); // queue 6
    assert.equal(at(11.3), 100); // queue 12
    assert.equal(at(11.43), 98); // queue 13
  });

  it('takes log10 as at least 1 below 10, and its whole part above', () => {
    assert.equal(measured({ initialLimit: 5 }).sample(ok(10, 5)), 11);
    assert.equal(measured({ initialLimit: 5 }).sample(drop(10, 5)), 4);
    assert.equal(measured({ initialLimit: 999, maxConcurrency: 2000 }).sample(ok(10, 999)), 1011);
    assert.equal(measured({ initialLimit: 1000, maxConcurrency: 2000 }).sample(ok(10, 1000)), 1018);
  });

  it('moves nothing while fewer than half its slots are in use, unless a drop', () => {
    assert.equal(measured({ initialLimit: 10 }).sample(ok(10, 4)), 10);
    assert.equal(measured({ initialLimit: 10 }).sample(ok(10, 5)), 16);
    assert.equal(measured({ initialLimit: 10 }).sample(drop(10, 0)), 9);
    assert.equal(measured({ initialLimit: 10 }).sample(drop(10, 10)), 9);
  });

  it('holds the limit within 1 and maxConcurrency', () => {
    const high = measured({ initialLimit: 18, maxConcurrency: 20 });
    assert.equal(high.sample(ok(10, 18)), 20);
    assert.equal(high.sample(ok(10, 20)), 20);
    assert.equal(measured({ initialLimit: 3, decrease: (limit) => limit - 5 }).sample(drop(10, 0)), 1);
    assert.equal(measured({ initialLimit: 3, decrease: 0 }).sample(drop(10, 0)), 1);
    assert.equal(measured({ initialLimit: 1 }).sample(drop(10, 0)), 1);
  });

  it('gives alpha, beta and threshold the whole limit in that order, increase and decrease the fractional one', () => {
    const calls: [string, number][] = [];
    const spy = (name: string, value: (limit: number) => number) => (limit: number) => {
      calls.push([name, limit]);
      return value(limit);
    };
    const limit = measured({
      initialLimit: 100,
      smoothing: 0.5,
      alpha: spy('alpha', () => 20),
      beta: spy('beta', () => 30),
      threshold: spy('threshold', () => 1),
      increase: spy('increase', (current) => current + 10),
      decrease: spy('decrease', (current) => current / 2),
    });
    assert.equal(limit.sample(drop(20, 0)), 75);
    assert.equal(limit.sample(drop(20, 0)), 56);
    assert.deepEqual(calls.splice(0), [
      ['decrease', 100],
      ['decrease', 75],
    ]);
    // queue = ceil(56.25 x (1 - 10 / 12)) = 10: above the threshold, below alpha.
    assert.equal(limit.sample(ok(12, 100)), 61);
    assert.deepEqual(calls, [
      ['alpha', 56],
      ['beta', 56],
      ['threshold', 56],
      ['increase', 56.25],
    ]);
  });

  it('takes a number for increase or decrease as the limit to go to', () => {
    assert.equal(measured({ initialLimit: 10, alpha: 5, threshold: 0, increase: 14 }).sample(ok(11, 10)), 14);
    assert.equal(measured({ initialLimit: 10, decrease: 7.5 }).sample(drop(11, 10)), 7);
  });
});

describe('vegas: probing for a new no-load rtt', () => {
  it('probes once the count reaches jitter x multiplier x limit, jitter 0.5 + r / 2, drawn anew each probe', () => {
    const random = scripted(0, 0.5);
    const limit = vegas({ initialLimit: 2, probeMultiplier: 2, random });
    assert.equal(limit.sample(ok(10, 0)), 2); // count 1 of 2: the first rtt
    assert.equal(limit.sample(ok(30, 2)), 2); // count 2: a probe, though the queue would have moved it
    assert.deepEqual(limit.rtt, { noLoad: 30 });
    assert.equal(random.calls, 2);
    assert.equal(limit.sample(ok(40, 0)), 2); // count 1 of 3 (jitter 0.75)
    assert.equal(limit.sample(ok(50, 0)), 2); // count 2
    assert.deepEqual(limit.rtt, { noLoad: 30 });
    assert.equal(limit.sample(ok(60, 0)), 2); // count 3: a probe
    assert.deepEqual(limit.rtt, { noLoad: 60 });
    assert.equal(random.calls, 3);
  });

  it('probes at the count the seeded jitter sets, by default every 30 x limit samples or so', () => {
    const seed = 7;
    const at = Math.ceil((mulberry32(seed)() * 0.5 + 0.5) * 30 * 20);
    const limit = vegas({ random: mulberry32(seed) });
    for (let count = 1; count < at; count++) limit.sample(ok(10 + count, 0));
    assert.deepEqual(limit.rtt, { noLoad: 11 });
    limit.sample(ok(10 + at, 0));
    assert.deepEqual(limit.rtt, { noLoad: 10 + at });
  });

  it('puts a jitter that rounds to 1 just below it, as ThreadLocalRandom does', () => {
    // A limit one step above 2: a jitter of 1 - 2^-53 makes the product 2, a jitter of 1 would leave it above.
    const limit = vegas({
      initialLimit: 4,
      probeMultiplier: 1,
      decrease: 2 + 2 ** -51,
      random: scripted(0.5, 1 - 2 ** -53, 0),
    });
    limit.sample(ok(10, 0));
    assert.equal(limit.sample(drop(10, 0)), 2);
    limit.sample(ok(10, 0)); // count 3 of 1.5: a probe, drawing the jitter that rounds to 1
    limit.sample(ok(20, 0)); // count 1
    assert.deepEqual(limit.rtt, { noLoad: 10 });
    limit.sample(ok(30, 0)); // count 2: a probe
    assert.deepEqual(limit.rtt, { noLoad: 30 });
  });
});

describe('vegas: options', () => {
  it('refuses a non-object and unknown keys', () => {
    refuses(() => vegas(null as never), 'options', '`options` must be an object (received null)');
    refuses(() => vegas(5 as never), 'options', '`options` must be an object (received 5)');
    refuses(
      () => vegas({ initalLimit: 5 } as never),
      'initalLimit',
      '`initalLimit` is not an option of vegas; did you mean `initialLimit`?',
    );
  });

  it('refuses limits that are not positive integers, and an initial limit above the max', () => {
    refuses(
      () => vegas({ initialLimit: 0 }),
      'initialLimit',
      '`initialLimit` must be a positive integer (received 0)',
    );
    refuses(
      () => vegas({ maxConcurrency: 1.5 }),
      'maxConcurrency',
      '`maxConcurrency` must be a positive integer (received 1.5)',
    );
    refuses(
      () => vegas({ initialLimit: 21, maxConcurrency: 20 }),
      'initialLimit',
      '`initialLimit` must be at most `maxConcurrency` (20) (received 21)',
    );
    assert.equal(vegas({ initialLimit: 20, maxConcurrency: 20 }).limit, 20);
    refuses(
      () => vegas({ probeMultiplier: 0 }),
      'probeMultiplier',
      '`probeMultiplier` must be a positive integer (received 0)',
    );
  });

  it('takes a smoothing above 0 and at most 1', () => {
    for (const bad of [0, 1.5, Number.NaN, '0.5']) {
      refuses(
        () => vegas({ smoothing: bad as number }),
        'smoothing',
        `\`smoothing\` must be a number above 0 and at most 1 (received ${typeof bad === 'string' ? '"0.5"' : bad})`,
      );
    }
    const tiny = measured({ initialLimit: 10, smoothing: 0.1, alpha: 3, beta: 6 });
    assert.equal(tiny.sample(ok(10, 10)), 10); // 10.6
    assert.equal(tiny.sample(ok(10, 10)), 11); // 11.2
  });

  it('takes alpha, beta and threshold as a non-negative integer or a function', () => {
    for (const option of ['alpha', 'beta', 'threshold'] as const) {
      for (const bad of [-1, 1.5, '3']) {
        refuses(
          () => vegas({ [option]: bad }),
          option,
          `\`${option}\` must be a non-negative integer or a function of the limit (received ${typeof bad === 'string' ? '"3"' : bad})`,
        );
      }
    }
    assert.equal(measured({ initialLimit: 10, threshold: 0, alpha: 0, beta: 0 }).sample(ok(11, 10)), 9);
  });

  it('takes increase and decrease as a finite non-negative number or a function', () => {
    for (const option of ['increase', 'decrease'] as const) {
      for (const bad of [-1, Number.POSITIVE_INFINITY, Number.NaN, null]) {
        refuses(
          () => vegas({ [option]: bad as number }),
          option,
          `\`${option}\` must be a finite non-negative number or a function of the limit (received ${bad})`,
        );
      }
    }
  });

  it('takes random as a function', () => {
    refuses(() => vegas({ random: 1 as never }), 'random', '`random` must be a function (received 1)');
  });
});
