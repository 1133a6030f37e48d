// An adaptive concurrency limit: this process's requests in flight, held under a limit that an algorithm moves with
// their measured round trips, shared out among partitions.
import { type Duration, parseDuration } from '../core/duration.js';
import { configError } from '../core/errors.js';
import { errorStatus, knownKeys, MAX_SPAN, optionalFunction } from '../core/validate.js';
import type {
  Ending,
  LocalAdmission,
  LocalPolicy,
  LocalSlot,
  LocalWait,
  PolicyFacts,
} from '../policies/local-policy.js';
import { type PolicyResult, policyName } from '../policies/policy.js';
import type { Clock, LimitAlgorithm } from './algorithms/algorithm.js';
import { gradient } from './algorithms/gradient.js';
import { mayAdmit, type Partition, partitionsOf, UNNAMED } from './partitions.js';
import { WaitQueue } from './wait-queue.js';

export interface AdaptiveConcurrencyOptions {
  /**
   * What moves the limit: `vegas()`, `gradient2()`, `aimd()` or `gradient()`, each made for this limit alone.
   * Default: Envoy's `gradient()` with `capToDemand` and `remeasureWhenFaster` (on this limit's `clock`), the one
   * that held both the latency and the goodput through the simulated overloads (docs/adaptive.md).
   */
  readonly algorithm?: LimitAlgorithm;
  /**
   * Shares of the limit guaranteed to partitions, e.g. `{ live: 0.9, batch: 0.1 }` (at most 1 in all). A partition
   * borrows beyond its share only what the others leave unused; the total never passes the limit.
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
  /** Milliseconds on a monotonic clock, for the round trips. Default `performance.now`. */
  readonly clock?: Clock;
}

/** What an adaptive limit reports of itself, for metrics. */
export interface AdaptiveStats {
  readonly name: string;
  readonly algorithm: LimitAlgorithm['name'];
  readonly limit: number;
  readonly inFlight: number;
  /** The algorithm's round-trip figures, in ms. */
  readonly rtt: Readonly<Record<string, number>>;
  /** Per partition (the unnamed one, '', for requests of none); counts since the limit was made. */
  readonly partitions: readonly Readonly<Omit<Partition, 'seenAt'>>[];
}

export interface AdaptiveConcurrency extends LocalPolicy {
  readonly algorithm: LimitAlgorithm;
  /** Requests holding a slot now. */
  readonly inFlight: number;
  stats(): AdaptiveStats;
}

const OPTIONS = ['algorithm', 'partitions', 'name', 'status', 'retryAfterMs', 'dropped', 'clock'];
const OVERLOAD = new Set([429, 503, 504]);
/** Each algorithm instance keeps one limit's state: two limits sharing one would move each other's. */
const taken = new WeakSet<LimitAlgorithm>();

/**
 * A concurrency limit found from latency, for this process: used like `concurrency()`, a request holds a slot
 * until its release, which measures it. Combine it with any policy on any store: the store keeps the fleet-wide
 * quota exact while this guards the instance.
 *
 * @example
 * // Shed load before the queue grows: 503 with Retry-After once latency says the service is full.
 * const guard = createLimiter({ policy: adaptiveConcurrency({ algorithm: gradient2() }) });
 */
export function adaptiveConcurrency(options: AdaptiveConcurrencyOptions = {}): AdaptiveConcurrency {
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
  // Last: an algorithm is taken only by a limit that is really made, so a call refused above may be made again.
  const algorithm = algorithmOption(options.algorithm, clock);
  return new AdaptiveLimit({ algorithm, partitions, name, denyStatus, retryAfterMs, droppedStatus, clock });
}

interface Settings {
  readonly algorithm: LimitAlgorithm;
  readonly partitions: Map<string, Partition>;
  readonly name: string;
  readonly denyStatus: number;
  readonly retryAfterMs: number;
  readonly droppedStatus: (status: number) => boolean;
  readonly clock: Clock;
}

class AdaptiveLimit implements AdaptiveConcurrency {
  readonly local = true;
  readonly kind = 'adaptive-concurrency';
  readonly name: string;
  readonly denyStatus: number;
  readonly algorithm: LimitAlgorithm;
  readonly #settings: Settings;
  readonly #line = new WaitQueue((partition) => this.#tryAdmit(partition));
  #inFlight = 0;
  #described: PolicyFacts;

  constructor(settings: Settings) {
    this.#settings = settings;
    this.name = settings.name;
    this.denyStatus = settings.denyStatus;
    this.algorithm = settings.algorithm;
    this.#described = facts(settings.name, settings.algorithm.limit, settings.retryAfterMs);
  }

  get limit(): number {
    return this.algorithm.limit;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  facts(): PolicyFacts {
    const { limit } = this.algorithm;
    if (this.#described.limit !== limit)
      this.#described = facts(this.name, limit, this.#settings.retryAfterMs);
    return this.#described;
  }

  admit(asked: string | undefined): LocalAdmission {
    // Those already waiting go first: a request that did not wait may not take a slot freed for them.
    const slot = this.#line.length === 0 ? this.#tryAdmit(asked) : undefined;
    if (slot === undefined) {
      const partition = this.#partition(asked);
      partition.rejected++;
      partition.seenAt = this.#settings.clock();
    }
    return { result: this.#result(slot !== undefined, this.algorithm.limit, this.#inFlight), slot };
  }

  peek(asked: string | undefined): PolicyResult {
    const { limit } = this.algorithm;
    const { partitions, clock } = this.#settings;
    const free =
      this.#line.length === 0 && mayAdmit(this.#partition(asked), partitions, limit, this.#inFlight, clock());
    // Told as `admit` would: an admission's remaining counts its own slot.
    return this.#result(free, limit, free ? this.#inFlight + 1 : this.#inFlight);
  }

  queue(wait: LocalWait): Promise<LocalSlot> {
    return this.#line.join(wait);
  }

  stats(): AdaptiveStats {
    const { name, algorithm } = this;
    const partitions = [...this.#settings.partitions.values()].map(({ seenAt: _, ...counts }) => ({
      ...counts,
    }));
    return {
      name,
      algorithm: algorithm.name,
      limit: algorithm.limit,
      inFlight: this.#inFlight,
      rtt: algorithm.rtt,
      partitions,
    };
  }

  #partition(asked: string | undefined): Partition {
    const { partitions } = this.#settings;
    return partitions.get(asked ?? UNNAMED) ?? (partitions.get(UNNAMED) as Partition);
  }

  /** A result with `held` in flight (this request's slot included when it is admitted). */
  #result(allowed: boolean, limit: number, held: number): PolicyResult {
    const { retryAfterMs } = this.#settings;
    return {
      allowed,
      remaining: Math.max(0, limit - held),
      resetMs: allowed ? 0 : retryAfterMs,
      retryAfterMs: allowed ? 0 : retryAfterMs,
    };
  }

  #tryAdmit(asked: string | undefined): LocalSlot | undefined {
    const partition = this.#partition(asked);
    const nowMs = this.#settings.clock();
    partition.seenAt = nowMs;
    if (!mayAdmit(partition, this.#settings.partitions, this.algorithm.limit, this.#inFlight, nowMs))
      return undefined;
    this.#inFlight++;
    partition.inFlight++;
    return this.#slot(partition, nowMs, this.#inFlight);
  }

  /** A slot of `partition` taken at `admittedAt` with `heldWith` in flight (itself included). */
  #slot(partition: Partition, admittedAt: number, heldWith: number): LocalSlot {
    let over = false;
    const end = (measured: boolean, ending: Ending | undefined) => {
      if (over) return;
      over = true;
      this.#inFlight--;
      partition.inFlight--;
      if (measured) this.#measure(partition, admittedAt, heldWith, ending);
      this.#line.serve();
    };
    return { release: (ending) => end(true, ending), cancel: () => end(false, undefined) };
  }

  #measure(partition: Partition, admittedAt: number, heldWith: number, ending: Ending | undefined): void {
    const { clock, droppedStatus } = this.#settings;
    const dropped = ending?.dropped ?? (ending?.status !== undefined && droppedStatus(ending.status));
    partition.completed++;
    if (dropped) partition.dropped++;
    this.algorithm.sample({ rttMs: clock() - admittedAt, inFlight: heldWith, dropped });
  }
}

function algorithmOption(value: LimitAlgorithm | undefined, clock: Clock): LimitAlgorithm {
  const algorithm = value ?? gradient({ clock, capToDemand: true, remeasureWhenFaster: true });
  if (typeof algorithm !== 'object' || algorithm === null || typeof algorithm.sample !== 'function')
    throw configError('algorithm', 'must be made by vegas(), gradient2(), aimd() or gradient()', value);
  if (taken.has(algorithm))
    throw configError('algorithm', 'is used by another adaptive limit already: make one for each limit');
  taken.add(algorithm);
  return algorithm;
}

function facts(name: string, limit: number, retryHintMs: number): PolicyFacts {
  return {
    kind: 'adaptive-concurrency',
    name,
    limit,
    windowMs: 0,
    quotaUnit: 'concurrent-requests',
    retryHintMs,
  };
}
