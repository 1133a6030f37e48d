// The options of Envoy's gradient controller, named after its proto's fields, with their defaults and checks.
import { configError } from '../../core/errors.js';
import { knownKeys, optionalFunction, positiveInteger, timerMs } from '../../core/validate.js';
import type { Clock, Random } from './algorithm.js';

/**
 * Envoy's `GradientControllerConfig`, flattened and in camelCase: durations in whole ms (Envoy truncates its
 * durations to ms too), percentages as percents (0-100), as its `type.v3.Percent` takes them.
 */
export interface GradientOptions {
  /** The percentile of a window's round trips that stands for them all (`sample_aggregate_percentile`). Default 50. */
  readonly sampleAggregatePercentile?: number;
  /** The highest the limit goes (`concurrency_limit_params.max_concurrency_limit`). Default 1000. */
  readonly maxConcurrencyLimit?: number;
  /**
   * How often the limit is recalculated from the round trips since the last time
   * (`concurrency_limit_params.concurrency_update_interval`). Envoy requires it; default here 100 ms, the value of
   * Envoy's documented example.
   */
  readonly concurrencyUpdateIntervalMs?: number;
  /**
   * How long after one minimum round-trip measurement the next starts, before jitter
   * (`min_rtt_calc_params.interval`). Envoy has no default; 60 s here. Not with `fixedMinRttMs`.
   */
  readonly minRttCalcIntervalMs?: number;
  /**
   * A minimum round trip given rather than measured (`min_rtt_calc_params.fixed_value`): no measurement windows, the
   * limit is never pinned. Unset by default.
   */
  readonly fixedMinRttMs?: number;
  /** The round trips a measurement takes, its minimum being their percentile (`request_count`). Default 50. */
  readonly requestCount?: number;
  /** Up to this percent of the interval is added, at random, before each measurement (`jitter`). Default 15. */
  readonly jitter?: number;
  /** The limit while measuring, and the lowest it goes (`min_rtt_calc_params.min_concurrency`). Default 3. */
  readonly minConcurrency?: number;
  /** The minimum round trip is taken as this percent longer, as a tolerance for noise (`buffer`). Default 25. */
  readonly buffer?: number;
  /**
   * Not Envoy's: an update may raise the limit to at most twice the most requests that were in flight during its
   * interval. Envoy's limit climbs to `maxConcurrencyLimit` whenever latency is low, however few requests come; a
   * surge then meets a limit far above what the service can take, and queues for the several updates it takes to
   * halve it back down. Default false (Envoy's behaviour).
   */
  readonly capToDemand?: boolean;
  /**
   * Not Envoy's: an update whose sampled round trip is shorter than the minimum by more than `buffer` holds the limit
   * (no rise), and five such updates in a row measure the minimum again at once. A minimum measured during a slowdown
   * otherwise stays until the next measurement (a minute later by default), and meanwhile the limit, steered by it,
   * lets the recovered service queue up to twice its capacity. Default false (Envoy's behaviour).
   */
  readonly remeasureWhenFaster?: boolean;
  /** Milliseconds on a monotonic clock, read when the limit is read and on each sample. Default `performance.now`. */
  readonly clock?: Clock;
  /** Uniform in [0, 1), for the jitter. Default `Math.random`. */
  readonly random?: Random;
}

const KNOWN = [
  'sampleAggregatePercentile',
  'maxConcurrencyLimit',
  'concurrencyUpdateIntervalMs',
  'minRttCalcIntervalMs',
  'fixedMinRttMs',
  'requestCount',
  'jitter',
  'minConcurrency',
  'buffer',
  'capToDemand',
  'remeasureWhenFaster',
  'clock',
  'random',
] as const;

/** Envoy's field names, and names from the other algorithms, that this one takes under another name or not at all. */
const ELSEWHERE = {
  concurrencyUpdateInterval: 'write `concurrencyUpdateIntervalMs`, in ms',
  interval: 'write `minRttCalcIntervalMs`, in ms',
  minRttCalcInterval: 'write `minRttCalcIntervalMs`, in ms',
  fixedValue: 'write `fixedMinRttMs`, in ms',
  minRttBuffer: 'write `buffer`, a percent',
  maxConcurrency: 'Envoy calls it `maxConcurrencyLimit`',
  minLimit: 'Envoy calls it `minConcurrency`',
  initialLimit: 'the limit starts at `minConcurrency`, measuring the minimum round trip',
};

/** The options checked, percents as fractions of 1, and the defaults filled in. */
export interface GradientSettings {
  readonly percentile: number;
  readonly maxLimit: number;
  readonly updateIntervalMs: number;
  readonly minRttIntervalMs: number;
  readonly fixedMinRttMs: number | undefined;
  readonly requestCount: number;
  readonly jitter: number;
  readonly minConcurrency: number;
  readonly buffer: number;
  readonly capToDemand: boolean;
  readonly remeasureWhenFaster: boolean;
  readonly clock: Clock;
  readonly random: Random;
}

export function gradientSettings(options: GradientOptions): GradientSettings {
  if (typeof options !== 'object' || options === null)
    throw configError('options', 'must be an object', options);
  knownKeys('gradient()', options, KNOWN, ELSEWHERE);
  const minConcurrency = positiveInteger('minConcurrency', options.minConcurrency ?? 3);
  const maxLimit = positiveInteger('maxConcurrencyLimit', options.maxConcurrencyLimit ?? 1000);
  if (maxLimit < minConcurrency)
    throw configError(
      'maxConcurrencyLimit',
      `must be at least \`minConcurrency\` (${minConcurrency})`,
      maxLimit,
    );
  const { fixedMinRttMs } = options;
  if (fixedMinRttMs !== undefined && options.minRttCalcIntervalMs !== undefined)
    throw configError(
      'minRttCalcIntervalMs',
      'cannot be combined with `fixedMinRttMs` (nothing is measured)',
    );
  return {
    percentile: percent('sampleAggregatePercentile', options.sampleAggregatePercentile ?? 50),
    maxLimit,
    updateIntervalMs: timerMs('concurrencyUpdateIntervalMs', options.concurrencyUpdateIntervalMs ?? 100),
    minRttIntervalMs: timerMs('minRttCalcIntervalMs', options.minRttCalcIntervalMs ?? 60_000),
    fixedMinRttMs: fixedMinRttMs === undefined ? undefined : positiveInteger('fixedMinRttMs', fixedMinRttMs),
    requestCount: positiveInteger('requestCount', options.requestCount ?? 50),
    jitter: percent('jitter', options.jitter ?? 15),
    minConcurrency,
    buffer: percent('buffer', options.buffer ?? 25),
    capToDemand: flag('capToDemand', options.capToDemand),
    remeasureWhenFaster: flag('remeasureWhenFaster', options.remeasureWhenFaster),
    clock: optionalFunction('clock', options.clock) ?? (() => performance.now()),
    random: optionalFunction('random', options.random) ?? Math.random,
  };
}

function flag(option: string, value: unknown): boolean {
  if (value !== undefined && typeof value !== 'boolean')
    throw configError(option, 'must be a boolean', value);
  return value === true;
}

/** A percent in [0, 100] as Envoy reads it: divided by 100. */
function percent(option: string, value: unknown): number {
  if (typeof value !== 'number' || !(value >= 0 && value <= 100))
    throw configError(option, 'must be a percent, from 0 to 100', value);
  return value / 100;
}
