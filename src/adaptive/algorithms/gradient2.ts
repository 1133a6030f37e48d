// Netflix's Gradient2 limit: grows while the latest round trip stays near a long-run average of them, shrinks when not.
import { configError } from '../../core/errors.js';
import { knownKeys, nonNegativeInteger, positiveInteger } from '../../core/validate.js';
import type { LimitAlgorithm, LimitSample } from './algorithm.js';
import { ExpAvgMeasurement } from './exp-avg-measurement.js';

export interface Gradient2Options {
  /**
   * The limit before any sample, at most `maxConcurrency`. Default 20. Below `minLimit`, it holds until the first
   * sample that is not app-limited.
   */
  readonly initialLimit?: number;
  /** The limit never goes below it. Default 20. */
  readonly minLimit?: number;
  /** The limit never goes above it. Default 200. */
  readonly maxConcurrency?: number;
  /** How far each sample moves the limit to its new estimate, in (0, 1]: 1 takes the estimate whole. Default 0.2. */
  readonly smoothing?: number;
  /**
   * How much the limit may grow per estimate while round trips stay low: a whole number, or a function of the current
   * limit (truncated to a whole number) returning one. Default 4.
   */
  readonly queueSize?: number | ((limit: number) => number);
  /**
   * How much slower than the long-run average a round trip may be (1.5: 50% slower) before the limit shrinks; at
   * least 1. Default 1.5.
   */
  readonly rttTolerance?: number;
  /** The span of the long-run average, in samples (after a plain average of the first 10). Default 600. */
  readonly longWindow?: number;
  /**
   * Off by default, which reproduces the reference exactly. The reference ignores drops: a timed-out or overloaded
   * answer counts only through its round trip, and under modest overload the long-run average catches up with the
   * slow round trips, so the limit keeps creeping up by `queueSize` while requests fail. A ratio in [0.5, 1) here
   * makes a dropped sample multiply the limit by it instead (as AIMD does; 0.9 is AIMD's default), kept within
   * `minLimit`..`maxConcurrency`; its round trip, which measures the failure rather than the service, is not averaged.
   */
  readonly backoffOnDrop?: number;
}

const KNOWN = [
  'initialLimit',
  'minLimit',
  'maxConcurrency',
  'smoothing',
  'queueSize',
  'rttTolerance',
  'longWindow',
  'backoffOnDrop',
] as const;

/** Names from Netflix's builder, or from the other algorithms, that this one does not take. */
const ELSEWHERE = {
  maxLimit: 'Gradient2 calls it `maxConcurrency`',
  shortWindow: 'the short round trip is the latest sample',
  driftMultiplier: 'the reference no longer uses it',
  metricRegistry: 'read `limit` and `rtt` instead',
  backoffRatio: 'Gradient2 calls it `backoffOnDrop`',
};

/** The samples averaged plainly before the long-run average turns exponential. */
const WARMUP_WINDOW = 10;
/** When the long-run average exceeds twice the latest round trip, it is scaled by this: load has passed. */
const LONG_RTT_DECAY = 0.95;

/**
 * Gradient2, as Netflix's `Gradient2Limit`. Each sample compares the latest round trip (`short`) with an exponential
 * average of them (`long`): `gradient = max(0.5, min(1, rttTolerance * long / short))`, the estimate
 * `limit * gradient + queueSize`, and the limit moves `smoothing` of the way to it, within
 * `minLimit`..`maxConcurrency`.
 * While fewer than half the limit are in flight the limit holds (the app, not the service, is the bottleneck).
 * Round trips are in ms where the reference takes ns: only their ratio counts, so the unit drops out, except that a
 * coarse clock gives round trips of 0, where the reference would divide 0 by 0 (see `sample`).
 *
 * @example
 * // Let Gradient2 find how many requests the service takes at once, between 10 and 500.
 * const algorithm = gradient2({ initialLimit: 20, minLimit: 10, maxConcurrency: 500 });
 * algorithm.sample({ rttMs: 12.5, inFlight: 20, dropped: false }); // 20: the limit after this request
 */
export function gradient2(options: Gradient2Options = {}): LimitAlgorithm {
  const { initialLimit, minLimit, maxLimit, smoothing, queueSize, tolerance, longWindow, backoffOnDrop } =
    resolve(options);
  const longRtt = new ExpAvgMeasurement(longWindow, WARMUP_WINDOW);
  let estimated = initialLimit;
  let lastRtt: number | undefined;
  const clamp = (limit: number) => Math.max(minLimit, Math.min(maxLimit, limit));

  return {
    name: 'gradient2',
    get limit() {
      return Math.trunc(estimated);
    },
    get rtt() {
      return lastRtt === undefined ? {} : { short: lastRtt, long: longRtt.value };
    },
    sample({ rttMs, inFlight, dropped }: LimitSample): number {
      if (dropped && backoffOnDrop !== undefined) {
        estimated = clamp(estimated * backoffOnDrop);
        return Math.trunc(estimated);
      }
      const queue = queueSize(Math.trunc(estimated));
      lastRtt = rttMs;
      const long = longRtt.add(rttMs);
      if (long / rttMs > 2) longRtt.scale(LONG_RTT_DECAY);
      if (inFlight < estimated / 2) return Math.trunc(estimated);
      // Equal round trips mean no queueing: gradient 1, as the formula gives, save for 0 / 0 (round trips of 0 ms),
      // where the reference's NaN would stick to the limit for good.
      const gradient = long === rttMs ? 1 : Math.max(0.5, Math.min(1, (tolerance * long) / rttMs));
      const next = estimated * gradient + queue;
      estimated = clamp(estimated * (1 - smoothing) + next * smoothing);
      return Math.trunc(estimated);
    },
  };
}

interface Settings {
  readonly initialLimit: number;
  readonly minLimit: number;
  readonly maxLimit: number;
  readonly smoothing: number;
  readonly queueSize: (limit: number) => number;
  readonly tolerance: number;
  readonly longWindow: number;
  readonly backoffOnDrop: number | undefined;
}

function resolve(options: Gradient2Options): Settings {
  if (typeof options !== 'object' || options === null)
    throw configError('options', 'must be an object', options);
  knownKeys('gradient2()', options, KNOWN, ELSEWHERE);
  const minLimit = positiveInteger('minLimit', options.minLimit ?? 20);
  const maxLimit = positiveInteger('maxConcurrency', options.maxConcurrency ?? 200);
  if (minLimit > maxLimit)
    throw configError('minLimit', `must be at most \`maxConcurrency\` (${maxLimit})`, minLimit);
  const initialLimit = positiveInteger('initialLimit', options.initialLimit ?? 20);
  // The reference only logs a warning here; with no logger to hand, a limit that starts above the most is refused.
  // One below the least it takes, as the reference does: the first sample that is not app-limited lifts it.
  if (initialLimit > maxLimit)
    throw configError('initialLimit', `must be at most \`maxConcurrency\` (${maxLimit})`, initialLimit);
  const { backoffOnDrop } = options;
  return {
    initialLimit,
    minLimit,
    maxLimit,
    smoothing: numberIn('smoothing', options.smoothing ?? 0.2, '(0, 1]', (n) => n > 0 && n <= 1),
    queueSize: queueSizeOption(options.queueSize ?? 4),
    tolerance: numberIn(
      'rttTolerance',
      options.rttTolerance ?? 1.5,
      '[1, Infinity)',
      (n) => n >= 1 && n < Infinity,
    ),
    longWindow: positiveInteger('longWindow', options.longWindow ?? 600),
    backoffOnDrop:
      backoffOnDrop === undefined
        ? undefined
        : numberIn('backoffOnDrop', backoffOnDrop, '[0.5, 1)', (n) => n >= 0.5 && n < 1),
  };
}

/** A number within `range` (NaN never is). */
function numberIn(option: string, value: unknown, range: string, within: (n: number) => boolean): number {
  if (typeof value !== 'number' || !within(value))
    throw configError(option, `must be a number in ${range}`, value);
  return value;
}

/** A fixed queue size as a function; a function's answer is checked each time, since it cannot be checked once. */
function queueSizeOption(value: unknown): (limit: number) => number {
  if (typeof value !== 'function') {
    const size = nonNegativeInteger('queueSize', value);
    return () => size;
  }
  return (limit) => {
    const size: unknown = value(limit);
    if (!Number.isSafeInteger(size) || (size as number) < 0)
      throw configError('queueSize', 'must return a non-negative integer', size);
    return size as number;
  };
}
