// AIMD: additive increase, multiplicative decrease on drops, exact to Netflix concurrency-limits' AIMDLimit.
import { type Duration, parseDuration } from '../../core/duration.js';
import { configError } from '../../core/errors.js';
import { knownKeys, positiveInteger } from '../../core/validate.js';
import type { LimitAlgorithm, LimitSample } from './algorithm.js';

export interface AimdOptions {
  /** The limit before any sample. Default 20. */
  readonly initialLimit?: number;
  /** The lowest the limit goes (once a sample moves it). Default 20. */
  readonly minLimit?: number;
  /** The highest the limit goes. Default 200. */
  readonly maxLimit?: number;
  /** What a drop multiplies the limit by (the whole part kept), at least 0.5 and below 1. Default 0.9. */
  readonly backoffRatio?: number;
  /** A round trip longer than this counts as a drop. Default 5 seconds. */
  readonly timeoutMs?: Duration;
}

interface Settings {
  readonly minLimit: number;
  readonly maxLimit: number;
  readonly backoffRatio: number;
  readonly timeoutMs: number;
}

const OPTIONS = ['initialLimit', 'minLimit', 'maxLimit', 'backoffRatio', 'timeoutMs'];

/** AIMD keeps no round-trip figure. */
const NO_RTT: Readonly<Record<string, number>> = Object.freeze({});

/**
 * Loss-based, like TCP Reno: each sample that used at least half the limit adds 1 to it, and each drop (a sample
 * marked dropped, or one slower than `timeoutMs`) multiplies it by `backoffRatio`, keeping the whole part; the
 * result is held within `minLimit` and `maxLimit`. Latency below the timeout moves nothing, so it suits a service
 * whose overload shows as errors rather than as slowness. The arithmetic is the reference's (AIMDLimit) exactly.
 *
 * @example
 * // Between 5 and 100 in flight; a request over 2 seconds counts as dropped.
 * const guard = adaptiveConcurrency({ algorithm: aimd({ initialLimit: 10, minLimit: 5, maxLimit: 100, timeoutMs: '2s' }) });
 */
export function aimd(options: AimdOptions = {}): LimitAlgorithm {
  if (typeof options !== 'object' || options === null)
    throw configError('options', 'must be an object', options);
  knownKeys('aimd', options, OPTIONS);
  const initialLimit = positiveInteger('initialLimit', options.initialLimit ?? 20);
  const minLimit = positiveInteger('minLimit', options.minLimit ?? 20);
  const maxLimit = positiveInteger('maxLimit', options.maxLimit ?? 200);
  if (minLimit > maxLimit)
    throw configError('minLimit', `must be at most \`maxLimit\` (${maxLimit})`, minLimit);
  // The reference only logs a warning here; with no logger to hand, a limit that starts above the most is
  // refused. One below the least it takes silently, as the reference does: the first sample lifts it.
  if (initialLimit > maxLimit)
    throw configError('initialLimit', `must be at most \`maxLimit\` (${maxLimit})`, initialLimit);
  const backoffRatio = options.backoffRatio ?? 0.9;
  if (typeof backoffRatio !== 'number' || !(backoffRatio >= 0.5 && backoffRatio < 1))
    throw configError('backoffRatio', 'must be a number at least 0.5 and below 1', backoffRatio);
  const timeoutMs = parseDuration('timeoutMs', options.timeoutMs ?? 5000);
  return new AimdLimit(initialLimit, { minLimit, maxLimit, backoffRatio, timeoutMs });
}

class AimdLimit implements LimitAlgorithm {
  readonly name = 'aimd';
  readonly rtt = NO_RTT;
  readonly #settings: Settings;
  #limit: number;

  constructor(initialLimit: number, settings: Settings) {
    this.#settings = settings;
    this.#limit = initialLimit;
  }

  get limit(): number {
    return this.#limit;
  }

  sample({ rttMs, inFlight, dropped }: LimitSample): number {
    const { minLimit, maxLimit, backoffRatio, timeoutMs } = this.#settings;
    let limit = this.#limit;
    // The reference compares nanoseconds with a timeout in nanoseconds; both are ms here, the same comparison.
    if (dropped || rttMs > timeoutMs) limit = Math.trunc(limit * backoffRatio);
    else if (inFlight * 2 >= limit) limit = limit + 1;
    this.#limit = Math.min(maxLimit, Math.max(minLimit, limit));
    return this.#limit;
  }
}
