// An adaptive limit's options: what each means, its default, and its checks, made once into the limit's settings.
import { type Duration, parseDuration } from '../core/duration.js';
import { configError } from '../core/errors.js';
import { errorStatus, knownKeys, MAX_SPAN, optionalFunction, timerMs } from '../core/validate.js';
import { policyName } from '../policies/policy.js';
import type { Clock, LimitAlgorithm } from './algorithms/algorithm.js';
import { gradient } from './algorithms/gradient.js';
import { type Partition, partitionsOf } from './partitions.js';

export interface AdaptiveConcurrencyOptions {
  /**
   * What moves the limit: `vegas()`, `gradient2()`, `aimd()` or `gradient()`, each made for this limit alone.
   * Default: Envoy's `gradient()` with `capToDemand` and `remeasureWhenFaster` (on this limit's `clock`), the one
   * that held both the latency and the goodput through the simulated overloads (docs/adaptive.md).
   */
  readonly algorithm?: LimitAlgorithm;
  /**
   * Shares of the limit guaranteed to partitions, e.g. `{ live: 0.9, batch: 0.1 }` (at most 1 in all). A partition
   * borrows beyond its share only what the others leave unused; an admission never takes the total past the limit.
   */
  readonly partitions?: Readonly<Record<string, number>>;
  /** Names it in headers and metrics. Default 'adaptive-concurrency'. */
  readonly name?: string;
  /** The status a denial answers with: the server is busy, not the client over a quota. Default 503. */
  readonly status?: number;
  /** The retry a denial advises (`Retry-After`): a slot frees whenever a request ends. Default 1 second. */
  readonly retryAfterMs?: Duration;
  /**
   * Whether a response's status tells of a dropped request (overload, a timeout), which the algorithms back off
   * from. Default: 429, 503 and 504. A release may say `dropped` itself instead.
   */
  readonly dropped?: (status: number) => boolean;
  /**
   * The longest a request may hold its slot: one held longer (a handler that never ends its response) is freed as
   * dropped when the limit is full, rather than kept from every request after it. Default 60 seconds.
   */
  readonly maxHoldMs?: Duration;
  /** Milliseconds on a monotonic clock, for the round trips. Default `performance.now`. */
  readonly clock?: Clock;
}

/** The options checked, and the defaults filled in. */
export interface AdaptiveSettings {
  readonly algorithm: LimitAlgorithm;
  readonly partitions: Map<string, Partition>;
  readonly name: string;
  readonly denyStatus: number;
  readonly retryAfterMs: number;
  readonly droppedStatus: (status: number) => boolean;
  readonly maxHoldMs: number;
  readonly clock: Clock;
}

const OPTIONS = [
  'algorithm',
  'partitions',
  'name',
  'status',
  'retryAfterMs',
  'dropped',
  'maxHoldMs',
  'clock',
];
const OVERLOAD = new Set([429, 503, 504]);
/** Each algorithm instance keeps one limit's state: two limits sharing one would move each other's. */
const taken = new WeakSet<LimitAlgorithm>();

export function adaptiveSettings(options: AdaptiveConcurrencyOptions): AdaptiveSettings {
  if (typeof options !== 'object' || options === null)
    throw configError('options', 'must be an object', options);
  knownKeys('adaptiveConcurrency', options, OPTIONS);
  const clock = optionalFunction('clock', options.clock) ?? (() => performance.now());
  const retryAfterMs = parseDuration('retryAfterMs', options.retryAfterMs ?? 1000);
  if (retryAfterMs >= MAX_SPAN) throw configError('retryAfterMs', 'must be below 2^51 ms', retryAfterMs);
  const partitions = partitionsOf(options.partitions);
  const name = policyName(options, 'adaptive-concurrency');
  const denyStatus = errorStatus('status', options.status ?? 503);
  const droppedStatus =
    optionalFunction('dropped', options.dropped) ?? ((status: number) => OVERLOAD.has(status));
  const maxHoldMs = timerMs('maxHoldMs', parseDuration('maxHoldMs', options.maxHoldMs ?? 60_000));
  // Last: an algorithm is taken only by a limit that is really made, so a call refused above may be made again.
  const algorithm = algorithmOption(options.algorithm, clock);
  return { algorithm, partitions, name, denyStatus, retryAfterMs, droppedStatus, maxHoldMs, clock };
}

function algorithmOption(value: LimitAlgorithm | undefined, clock: Clock): LimitAlgorithm {
  const algorithm = value ?? gradient({ clock, capToDemand: true, remeasureWhenFaster: true });
  // `null` was replaced by the default above: only an object with a `sample` method is left to check for.
  if (typeof algorithm !== 'object' || typeof algorithm.sample !== 'function')
    throw configError('algorithm', 'must be made by vegas(), gradient2(), aimd() or gradient()', value);
  if (taken.has(algorithm))
    throw configError('algorithm', 'is used by another adaptive limit already: make one for each limit');
  taken.add(algorithm);
  return algorithm;
}
