// Vegas: TCP Vegas's queue estimate as a concurrency limit, exact to Netflix concurrency-limits' VegasLimit.
import { configError } from '../../core/errors.js';
import { knownKeys, optionalFunction, positiveInteger } from '../../core/validate.js';
import type { LimitAlgorithm, LimitSample, Random } from './algorithm.js';

/** A figure worked out from the current limit. */
export type LimitFunction = (limit: number) => number;

export interface VegasOptions {
  /** The limit before any sample. Default 20. */
  readonly initialLimit?: number;
  /** The highest the limit goes. Default 1000. */
  readonly maxConcurrency?: number;
  /** The weight of a newly worked-out limit against the current one, above 0 and at most 1. Default 1 (none kept). */
  readonly smoothing?: number;
  /**
   * Below this many queued requests the limit grows by `increase`: a whole number, or a function of the whole
   * limit returning one. Default `3 × log10(limit)`, where log10 here is the whole part of it, at least 1.
   */
  readonly alpha?: number | LimitFunction;
  /** Above this many queued requests the limit shrinks by `decrease`. Default `6 × log10(limit)`. */
  readonly beta?: number | LimitFunction;
  /** At most this many queued requests (none, nearly) grows the limit by `beta` at once. Default `log10(limit)`. */
  readonly threshold?: number | LimitFunction;
  /** The limit after a gentle increase, a function of the limit (fractions kept). Default `limit + log10(limit)`. */
  readonly increase?: number | LimitFunction;
  /** The limit after a decrease, or a drop. Default `limit - log10(limit)`. */
  readonly decrease?: number | LimitFunction;
  /** Re-measures the no-load round trip every `probeMultiplier × limit` samples, jittered by up to half. Default 30. */
  readonly probeMultiplier?: number;
  /** The probe's jitter. Default `Math.random`. */
  readonly random?: Random;
}

interface Settings {
  readonly maxConcurrency: number;
  readonly smoothing: number;
  readonly alpha: LimitFunction;
  readonly beta: LimitFunction;
  readonly threshold: LimitFunction;
  readonly increase: LimitFunction;
  readonly decrease: LimitFunction;
  readonly probeMultiplier: number;
  readonly random: Random;
}

const OPTIONS = [
  'initialLimit',
  'maxConcurrency',
  'smoothing',
  'alpha',
  'beta',
  'threshold',
  'increase',
  'decrease',
  'probeMultiplier',
  'random',
];

/**
 * TCP Vegas for requests: from the lowest round trip seen (`noLoad`, the service unqueued) and each sample's, the
 * queue is `limit × (1 − noLoad / rtt)`; the limit jumps by `beta` when there is none to speak of (`threshold`),
 * grows by `increase` while it is below `alpha`, shrinks by `decrease` above `beta` and on any drop, and stays put
 * while fewer than half its slots are in use. Every `probeMultiplier × limit` samples or so (jittered), it takes the
 * sample's round trip as the new no-load one, so that a service that got slower for good is not read as queued
 * forever. The arithmetic is the reference's (VegasLimit) to the bit: a fractional limit inside, truncated outside.
 *
 * @example
 * // Start at 10 requests in flight, never above 200.
 * const guard = adaptiveConcurrency({ algorithm: vegas({ initialLimit: 10, maxConcurrency: 200 }) });
 */
export function vegas(options: VegasOptions = {}): LimitAlgorithm {
  if (typeof options !== 'object' || options === null)
    throw configError('options', 'must be an object', options);
  knownKeys('vegas', options, OPTIONS);
  const initialLimit = positiveInteger('initialLimit', options.initialLimit ?? 20);
  const maxConcurrency = positiveInteger('maxConcurrency', options.maxConcurrency ?? 1000);
  // The reference only logs a warning here; with no logger to hand, a limit that starts out of bounds is refused.
  if (initialLimit > maxConcurrency)
    throw configError('initialLimit', `must be at most \`maxConcurrency\` (${maxConcurrency})`, initialLimit);
  const smoothing = options.smoothing ?? 1;
  if (typeof smoothing !== 'number' || !(smoothing > 0 && smoothing <= 1))
    throw configError('smoothing', 'must be a number above 0 and at most 1', smoothing);
  const settings: Settings = {
    maxConcurrency,
    smoothing,
    alpha: wholeFigure('alpha', options.alpha, (limit) => 3 * log10Root(limit)),
    beta: wholeFigure('beta', options.beta, (limit) => 6 * log10Root(limit)),
    threshold: wholeFigure('threshold', options.threshold, log10Root),
    // The reference truncates the limit before its log10; the whole part of log10 steps only at powers of ten,
    // which are whole, so it is the same without.
    increase: limitFigure('increase', options.increase, (limit) => limit + log10Root(limit)),
    decrease: limitFigure('decrease', options.decrease, (limit) => limit - log10Root(limit)),
    probeMultiplier: positiveInteger('probeMultiplier', options.probeMultiplier ?? 30),
    random: optionalFunction('random', options.random) ?? Math.random,
  };
  return new VegasLimit(initialLimit, settings);
}

/**
 * The reference's Log10RootIntFunction: the whole part of log10, at least 1 (its table below 1000 caches this).
 * Math.log10 is exact at powers of ten, as Java's is.
 */
function log10Root(limit: number): number {
  return Math.max(1, Math.trunc(Math.log10(limit)));
}

/** A figure option as given: absent, a number, or a function of the limit. */
type Figure = number | LimitFunction | undefined;

/** alpha, beta, threshold: the reference's IntUnaryOperator, or its builder's `int` as a constant one. */
function wholeFigure(option: string, value: Figure, fallback: LimitFunction): LimitFunction {
  if (value === undefined) return fallback;
  if (typeof value === 'function') return value;
  // Number.isSafeInteger and Number.isFinite are false for anything not a number (a string '3' included).
  if (!Number.isSafeInteger(value) || value < 0)
    throw configError(option, 'must be a non-negative integer or a function of the limit', value);
  return () => value;
}

/** increase, decrease: the reference's DoubleUnaryOperator on the fractional limit; a number is the limit to go to. */
function limitFigure(option: string, value: Figure, fallback: LimitFunction): LimitFunction {
  if (value === undefined) return fallback;
  if (typeof value === 'function') return value;
  if (!Number.isFinite(value) || value < 0)
    throw configError(option, 'must be a finite non-negative number or a function of the limit', value);
  return () => value;
}

/**
 * ThreadLocalRandom.nextDouble(0.5, 1): `origin + r × (bound − origin)`, put just below the bound when rounding
 * lands on it (as r nears 1).
 */
function probeJitter(random: Random): number {
  const jitter = random() * 0.5 + 0.5;
  return jitter < 1 ? jitter : 1 - 2 ** -53;
}

class VegasLimit implements LimitAlgorithm {
  readonly name = 'vegas';
  readonly #settings: Settings;
  /** The reference's estimatedLimit: fractional, truncated only to be the limit. */
  #estimated: number;
  #limit: number;
  /** The lowest round trip since the last probe, in ms; 0 until the first sample, as in the reference. */
  #noLoad = 0;
  #probeCount = 0;
  #probeJitter: number;

  constructor(initialLimit: number, settings: Settings) {
    this.#settings = settings;
    this.#estimated = initialLimit;
    this.#limit = initialLimit;
    this.#probeJitter = probeJitter(settings.random);
  }

  get limit(): number {
    return this.#limit;
  }

  get rtt(): Readonly<Record<string, number>> {
    return this.#noLoad === 0 ? {} : { noLoad: this.#noLoad };
  }

  sample({ rttMs, inFlight, dropped }: LimitSample): number {
    // The reference throws on a round trip of 0 or less, changing nothing; one from a clock too coarse to see it
    // (the same tick) changes nothing here either, without the throw.
    if (rttMs <= 0) return this.#limit;
    const { probeMultiplier, random } = this.#settings;
    this.#probeCount++;
    // The reference's product, in its order: (jitter × multiplier) × limit.
    if (this.#probeJitter * probeMultiplier * this.#estimated <= this.#probeCount) {
      this.#probeJitter = probeJitter(random);
      this.#probeCount = 0;
      this.#noLoad = rttMs;
      return this.#limit;
    }
    if (this.#noLoad === 0 || rttMs < this.#noLoad) {
      this.#noLoad = rttMs;
      return this.#limit;
    }
    this.#estimated = this.#estimate(rttMs, inFlight, dropped);
    this.#limit = Math.trunc(this.#estimated);
    return this.#limit;
  }

  /**
   * The reference's updateEstimatedLimit, returning the new fractional limit. Its round trips are integer
   * nanoseconds and these fractional ms: only their ratio is used, which the unit does not change.
   */
  #estimate(rttMs: number, inFlight: number, dropped: boolean): number {
    const settings = this.#settings;
    const estimated = this.#estimated;
    // The reference's (int) cast of a ceiling, which is whole already.
    const queueSize = Math.ceil(estimated * (1 - this.#noLoad / rttMs));
    let next: number;
    if (dropped) next = settings.decrease(estimated);
    // Too few in flight to tell whether more would queue: no upward drift.
    else if (inFlight * 2 < estimated) return estimated;
    else {
      // All three, in the reference's order, as a function given for one may count its calls.
      const whole = Math.trunc(estimated);
      const alpha = settings.alpha(whole);
      const beta = settings.beta(whole);
      const threshold = settings.threshold(whole);
      if (queueSize <= threshold) next = estimated + beta;
      else if (queueSize < alpha) next = settings.increase(estimated);
      else if (queueSize > beta) next = settings.decrease(estimated);
      else return estimated;
    }
    next = Math.max(1, Math.min(settings.maxConcurrency, next));
    return (1 - settings.smoothing) * estimated + settings.smoothing * next;
  }
}
