// simulate() and the traffic patterns: exact numbers on deterministic input, and agreement with the policies called directly.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TollgateError } from '../../../src/core/errors.js';
import { fixedWindow } from '../../../src/policies/fixed-window.js';
import type { AnyPolicy } from '../../../src/policies/policy.js';
import { slidingWindow } from '../../../src/policies/sliding-window.js';
import { slidingWindowCounter } from '../../../src/policies/sliding-window-counter.js';
import { tokenBucket } from '../../../src/policies/token-bucket.js';
import {
  boundaryBurst,
  bursts,
  generateArrivals,
  type PolicySpec,
  ramp,
  random,
  simulate,
  simulationWork,
  steady,
} from '../../../src/simulator/engine/index.js';
import { withoutPointer } from '../../harness/error-pointer.js';

const FIXED: PolicySpec = { kind: 'fixed-window', limit: 5, windowMs: '10s' };
const SLIDING: PolicySpec = { kind: 'sliding-window', limit: 5, windowMs: 10_000 };

function summaryOf(simulation: ReturnType<typeof simulate>, i: number) {
  return simulation.policies[i]?.summary;
}

function assertTollgateError(fn: () => unknown, code: string, pattern: RegExp, option?: string): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof TollgateError, `expected a TollgateError, got ${String(error)}`);
    assert.equal(error.code, code);
    // Its own words: a prefixed message still ends with one pointer, the one to its code's section.
    assert.match(withoutPointer(error), pattern);
    if (option !== undefined) assert.equal(error.option, option);
    return true;
  });
}

describe('traffic patterns', () => {
  it('steady: evenly spaced from 0, before the duration', () => {
    assert.deepEqual(steady(2, 3000), [0, 500, 1000, 1500, 2000, 2500]);
    assert.deepEqual(steady(3, '1s'), [0, 333, 667]);
  });

  it('bursts: size requests every everyMs, spacingMs apart', () => {
    assert.deepEqual(bursts(3, 1000, 3000, 10), [0, 10, 20, 1000, 1010, 1020, 2000, 2010, 2020]);
    assert.deepEqual(bursts(2, '5s', '10s'), [0, 0, 5000, 5000]);
  });

  it('boundary burst: an anchor at 0, limit just before windowMs and limit from it on', () => {
    assert.deepEqual(
      boundaryBurst(5, 10_000),
      [0, 9500, 9600, 9700, 9800, 9900, 10_000, 10_100, 10_200, 10_300, 10_400],
    );
    assert.deepEqual(boundaryBurst(2, '1s', 1), [0, 998, 999, 1000, 1001]);
  });

  it('random: the same seed gives the same arrivals, another seed others', () => {
    const a = random(5, 60_000, 42);
    assert.deepEqual(a, random(5, 60_000, 42));
    assert.notDeepEqual(a, random(5, 60_000, 43));
    assert.ok(a.every((t, i) => Number.isInteger(t) && t >= 0 && t < 60_000 && t >= (a[i - 1] ?? 0)));
    // A Poisson count with mean 300 lies within 5 standard deviations of it.
    assert.ok(Math.abs(a.length - 300) < 5 * Math.sqrt(300), `${a.length} arrivals`);
  });

  it('ramp: request k arrives when the expected count reaches k', () => {
    // 1/s rising to 5/s over 4 s: N(t) = t + t^2 / 2, N(4) = 12.
    assert.deepEqual(ramp(1, 5, 4000), [0, 732, 1236, 1646, 2000, 2317, 2606, 2873, 3123, 3359, 3583, 3796]);
    assert.deepEqual(ramp(0, 4, 2000), [0, 1000, 1414, 1732]);
    assert.deepEqual(ramp(5, 0, 2000), [0, 211, 451, 735, 1106]);
    assert.deepEqual(ramp(2, 2, 2000), steady(2, 2000));
  });

  it('rejects bad parameters with the library error naming the field', () => {
    assertTollgateError(() => steady(0, 1000), 'ERR_TOLLGATE_CONFIG', /ratePerSecond/, 'ratePerSecond');
    assertTollgateError(() => steady(1, 'soon' as never), 'ERR_TOLLGATE_CONFIG', /durationMs/, 'durationMs');
    assertTollgateError(() => bursts(5, 100, 1000, 30), 'ERR_TOLLGATE_CONFIG', /overlap/, 'spacingMs');
    assertTollgateError(() => boundaryBurst(5, 100, 20), 'ERR_TOLLGATE_CONFIG', /windowMs/, 'spacingMs');
    assertTollgateError(() => random(1, 1000, 2 ** 32), 'ERR_TOLLGATE_CONFIG', /seed/, 'seed');
    assertTollgateError(() => ramp(0, 0, 1000), 'ERR_TOLLGATE_CONFIG', /both be 0/);
    assertTollgateError(
      () => generateArrivals({ kind: 'steady', ratePerSecond: 1, durationMs: 1000, extra: 1 } as never),
      'ERR_TOLLGATE_CONFIG',
      /`extra` is not an option of the steady pattern/,
    );
    assertTollgateError(
      () => generateArrivals({ kind: 'zigzag' } as never),
      'ERR_TOLLGATE_CONFIG',
      /kind/,
      'kind',
    );
  });

  it('stops at maxArrivals instead of filling memory', () => {
    assert.equal(generateArrivals({ kind: 'steady', ratePerSecond: 10, durationMs: 1000 }, 10).length, 10);
    assertTollgateError(
      () => generateArrivals({ kind: 'steady', ratePerSecond: 1e9, durationMs: '1d' }, 10),
      'ERR_TOLLGATE_ARGUMENT',
      /more than 10 arrivals/,
    );
  });
});

describe('simulate', () => {
  it('boundary burst: a fixed window admits 2 x limit - 1 within one window, a sliding window log admits limit', () => {
    const simulation = simulate({ policies: [FIXED, SLIDING], arrivals: boundaryBurst(5, 10_000) });
    // The anchor at 0, four before the boundary (the fifth finds the window full), five after it.
    assert.deepEqual(summaryOf(simulation, 0), {
      admitted: 10,
      rejected: 1,
      maxAdmittedInWindow: 9,
      longestRetryAfterMs: 100,
      rejectedForever: 0,
    });
    // The anchor's slot frees at 10 s: one more passes, then each rejection waits for 9.5 s + 10 s.
    assert.deepEqual(summaryOf(simulation, 1), {
      admitted: 6,
      rejected: 5,
      maxAdmittedInWindow: 5,
      longestRetryAfterMs: 9400,
      rejectedForever: 0,
    });
    assert.deepEqual(
      simulation.policies[0]?.timeline.map((e) => [e.timeMs, e.allowed, e.remaining, e.level]),
      [
        [0, true, 4, 1],
        [9500, true, 3, 2],
        [9600, true, 2, 3],
        [9700, true, 1, 4],
        [9800, true, 0, 5],
        [9900, false, 0, 5],
        [10_000, true, 4, 1],
        [10_100, true, 3, 2],
        [10_200, true, 2, 3],
        [10_300, true, 1, 4],
        [10_400, true, 0, 5],
      ],
    );
    assert.deepEqual(simulation.policies[0]?.policy, {
      kind: 'fixed-window',
      name: 'fixed-window',
      limit: 5,
      windowMs: 10_000,
    });
  });

  it('token bucket: the level is the tokens left, and it refills between requests', () => {
    const simulation = simulate({
      policies: [{ kind: 'token-bucket', capacity: 5, refillPerSecond: 1 }],
      arrivals: [0, 0, 0, 0, 0, 0, 3000],
    });
    const result = simulation.policies[0];
    assert.equal(result?.level, 'tokens');
    assert.deepEqual(
      result?.timeline.map((e) => [e.allowed, e.level, e.retryAfterMs]),
      [
        [true, 4, 0],
        [true, 3, 0],
        [true, 2, 0],
        [true, 1, 0],
        [true, 0, 0],
        [false, 0, 1000],
        [true, 2, 0],
      ],
    );
    // Samples fall every 6 ms here (3.3 s / 600); the last one at or before t shows the refill so far.
    const levelBefore = (t: number) => result?.levels.filter((s) => s.timeMs <= t).at(-1)?.level;
    assert.equal(levelBefore(0), 5, 'full before the first request');
    assert.deepEqual([levelBefore(999), levelBefore(1999), levelBefore(2999)], [0, 1, 2]);
    assert.equal(result?.summary.maxAdmittedInWindow, 6);
  });

  it('a bucket that never refills counts the whole run and reports rejections no wait can cure', () => {
    const { summary } =
      simulate({
        policies: [{ kind: 'token-bucket', capacity: 2, refillPerSecond: 0 }],
        arrivals: [0, 1000, 50_000, 90_000],
      }).policies[0] ?? assert.fail();
    assert.deepEqual(summary, {
      admitted: 2,
      rejected: 2,
      maxAdmittedInWindow: 2,
      longestRetryAfterMs: 0,
      rejectedForever: 2,
    });
  });

  it('equals the policies called directly, state threaded as a store does', () => {
    const arrivals = [...random(3, 60_000, 7), ...bursts(12, 5000, 20_000, 5).map((t) => t + 60_000)];
    const cases: [PolicySpec, AnyPolicy][] = [
      [
        { kind: 'token-bucket', capacity: 8, refillPerSecond: 2.5 },
        tokenBucket({ capacity: 8, refillPerSecond: 2.5 }),
      ],
      [{ kind: 'fixed-window', limit: 10, windowMs: '4s' }, fixedWindow({ limit: 10, windowMs: 4000 })],
      [{ kind: 'sliding-window', limit: 10, windowMs: '4s' }, slidingWindow({ limit: 10, windowMs: 4000 })],
      [
        { kind: 'sliding-window-counter', limit: 10, windowMs: '4s' },
        slidingWindowCounter({ limit: 10, windowMs: 4000 }),
      ],
    ];
    for (const cost of [1, 3]) {
      const simulation = simulate({ policies: cases.map(([spec]) => spec), arrivals, cost });
      cases.forEach(([, policy], i) => {
        let state: unknown;
        const results = arrivals.map((t) => {
          const { result, next } = policy.evaluate(state, t, cost);
          if (next !== undefined) state = next;
          return result;
        });
        const admitted = arrivals.filter((_, j) => results[j]?.allowed);
        const rejected = results.filter((r) => !r.allowed);
        // The naive count: for each admission, the admissions in the window ending at it.
        const maxInWindow = Math.max(
          0,
          ...admitted.map((t) => admitted.filter((u) => u > t - policy.windowMs && u <= t).length),
        );
        const ours = simulation.policies[i] ?? assert.fail();
        assert.deepEqual(
          ours.timeline.map(({ allowed, remaining, retryAfterMs }) => ({ allowed, remaining, retryAfterMs })),
          results.map(({ allowed, remaining, retryAfterMs }) => ({ allowed, remaining, retryAfterMs })),
          `${policy.kind}, cost ${cost}`,
        );
        assert.deepEqual(ours.summary, {
          admitted: admitted.length,
          rejected: rejected.length,
          maxAdmittedInWindow: maxInWindow,
          longestRetryAfterMs: Math.max(0, ...rejected.map((r) => r.retryAfterMs)),
          rejectedForever: rejected.filter((r) => r.retryAfterMs < 0).length,
        });
        assert.ok(
          ours.summary.rejected > 0,
          `${policy.kind}, cost ${cost}: the traffic exercises rejections`,
        );
      });
    }
  });

  it('is deterministic: the same input gives the same output', () => {
    const input = { policies: [FIXED, SLIDING], arrivals: random(4, 30_000, 99) };
    assert.deepEqual(simulate(input), simulate(input));
  });

  it('samples the level from 0 to a tenth past the last arrival', () => {
    const { levels } = simulate({ policies: [FIXED], arrivals: [0, 6000] }).policies[0] ?? assert.fail();
    assert.equal(levels[0]?.timeMs, 0);
    assert.equal(levels.at(-1)?.timeMs, 6600);
    assert.ok(levels.length <= 601);
  });

  it('reports bad policy specs with the factory error, prefixed with the policy number', () => {
    assertTollgateError(
      () =>
        simulate({ policies: [FIXED, { kind: 'fixed-window', limit: -1, windowMs: 1000 }], arrivals: [] }),
      'ERR_TOLLGATE_CONFIG',
      /^policy 2: `limit` must be a non-negative integer \(received -1\)$/,
      'limit',
    );
    assertTollgateError(
      () => simulate({ policies: [{ kind: 'leaky-bucket' } as never], arrivals: [] }),
      'ERR_TOLLGATE_CONFIG',
      /^policy 1: `kind` must be one of/,
      'kind',
    );
    assertTollgateError(
      () => simulate({ policies: [{ ...FIXED, capacity: 3 } as never], arrivals: [] }),
      'ERR_TOLLGATE_CONFIG',
      /`capacity` is not an option of a fixed-window policy/,
    );
    assertTollgateError(
      () => simulate({ policies: [{ kind: 'token-bucket', capacity: 5 }], arrivals: [] }),
      'ERR_TOLLGATE_CONFIG',
      /`refillPerSecond` is required/,
    );
  });

  it('rejects unusable arrivals and costs', () => {
    assertTollgateError(() => simulate({ policies: [], arrivals: [] }), 'ERR_TOLLGATE_ARGUMENT', /policies/);
    assertTollgateError(
      () => simulate({ policies: [FIXED], arrivals: [0, 10, 5] }),
      'ERR_TOLLGATE_ARGUMENT',
      /ascending order \(arrival 3, 5, is before 10\)/,
    );
    assertTollgateError(
      () => simulate({ policies: [FIXED], arrivals: [0.5] }),
      'ERR_TOLLGATE_ARGUMENT',
      /whole/,
    );
    assertTollgateError(
      () => simulate({ policies: [FIXED], arrivals: [-1] }),
      'ERR_TOLLGATE_ARGUMENT',
      /arrival 1/,
    );
    assertTollgateError(
      () => simulate({ policies: [FIXED], arrivals: '0,1' as never }),
      'ERR_TOLLGATE_ARGUMENT',
      /array/,
    );
    assertTollgateError(
      () => simulate({ policies: [FIXED], arrivals: [], cost: 0 }),
      'ERR_TOLLGATE_CONFIG',
      /cost/,
    );
  });

  it('works out its cost before running: evaluations, times the log a sliding window may copy', () => {
    const arrivals = [0, 6000, 6000];
    // 3 arrivals and 601 level samples, from 0 to 6600 ms 11 ms apart.
    const { levels } = simulate({ policies: [FIXED], arrivals }).policies[0] ?? assert.fail();
    const evaluations = arrivals.length + levels.length;
    assert.equal(evaluations, 604);
    const bucket: PolicySpec = { kind: 'token-bucket', capacity: 5, refillPerSecond: 1 };
    assert.equal(simulationWork({ policies: [FIXED, bucket], arrivals }), 2 * evaluations);
    // Its limit (5), or what 3 arrivals can have admitted (3 at cost 1, 6 at cost 2), whichever is fewer.
    assert.equal(simulationWork({ policies: [SLIDING], arrivals }), evaluations * (1 + 3));
    assert.equal(simulationWork({ policies: [SLIDING], arrivals, cost: 2 }), evaluations * (1 + 5));
    // A cost above the limit is never admitted: the log stays empty.
    assert.equal(simulationWork({ policies: [SLIDING], arrivals, cost: 6 }), evaluations);
    const input = { policies: [FIXED, SLIDING], arrivals };
    const work = simulationWork(input);
    assert.deepEqual(simulate(input, { maxWork: work }), simulate(input));
    assertTollgateError(
      () => simulate(input, { maxWork: work - 1 }),
      'ERR_TOLLGATE_ARGUMENT',
      new RegExp(
        `^at most ${work - 1} units of work can be simulated at once \\(this scenario needs ${work}:`,
      ),
    );
    assertTollgateError(() => simulate(input, { maxWork: 0 }), 'ERR_TOLLGATE_CONFIG', /maxWork/, 'maxWork');
  });
});
