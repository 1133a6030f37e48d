// An adaptive concurrency limit: this process's requests in flight, held under a limit that an algorithm moves with
// their measured round trips, shared out among partitions.
import type {
  Ending,
  LocalAdmission,
  LocalPolicy,
  LocalSlot,
  LocalWait,
  PolicyFacts,
} from '../policies/local-policy.js';
import type { PolicyResult } from '../policies/policy.js';
import {
  type AdaptiveConcurrencyOptions,
  type AdaptiveSettings,
  adaptiveSettings,
} from './adaptive-options.js';
import type { LimitAlgorithm } from './algorithms/algorithm.js';
import { ACTIVE_MS, mayAdmit, type Partition, UNNAMED } from './partitions.js';
import { WaitQueue } from './wait-queue.js';

export type { AdaptiveConcurrencyOptions } from './adaptive-options.js';

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
  return new AdaptiveLimit(adaptiveSettings(options));
}

/** A slot handed out and not yet had back; the set of them is in admission order, so the oldest expire first. */
interface Held {
  readonly partition: Partition;
  readonly admittedAt: number;
  /** Requests in flight when it was taken, itself included. */
  readonly heldWith: number;
}

class AdaptiveLimit implements AdaptiveConcurrency {
  readonly local = true;
  readonly kind = 'adaptive-concurrency';
  readonly name: string;
  readonly denyStatus: number;
  readonly algorithm: LimitAlgorithm;
  readonly #settings: AdaptiveSettings;
  readonly #line = new WaitQueue((partition) => this.#tryAdmit(partition), ACTIVE_MS);
  readonly #held = new Set<Held>();
  #inFlight = 0;
  #described: PolicyFacts;

  constructor(settings: AdaptiveSettings) {
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
    // Room that came while callers wait (a limit raised on a timer) is theirs first.
    if (this.#line.length > 0) this.#line.serve();
    const admission = this.#tryAdmit(asked);
    if (admission !== undefined) return admission;
    this.#partition(asked).rejected++;
    return { result: this.#result(false, this.algorithm.limit, this.#inFlight), slot: undefined };
  }

  peek(asked: string | undefined): PolicyResult {
    const { limit } = this.algorithm;
    const { partitions, clock } = this.#settings;
    const free = mayAdmit(this.#partition(asked), partitions, limit, this.#inFlight, clock());
    // Told as `admit` would: an admission's remaining counts its own slot.
    return this.#result(free, limit, free ? this.#inFlight + 1 : this.#inFlight);
  }

  queue(wait: LocalWait): Promise<LocalAdmission> {
    return this.#line.join(wait);
  }

  stats(): AdaptiveStats {
    const { name, algorithm } = this;
    const partitions = [...this.#settings.partitions.values()].map(({ seenAt: _, ...counts }) => ({
      ...counts,
    }));
    const { limit, rtt } = algorithm;
    return { name, algorithm: algorithm.name, limit, inFlight: this.#inFlight, rtt, partitions };
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

  #tryAdmit(asked: string | undefined): LocalAdmission | undefined {
    const partition = this.#partition(asked);
    const nowMs = this.#settings.clock();
    partition.seenAt = nowMs;
    const { limit } = this.algorithm;
    const { partitions } = this.#settings;
    const may = () => mayAdmit(partition, partitions, limit, this.#inFlight, nowMs);
    // Slots held past `maxHoldMs` are looked for only when they might be what stands in the way.
    if (!may() && !(this.#expire(nowMs) && may())) return undefined;
    this.#inFlight++;
    partition.inFlight++;
    const held: Held = { partition, admittedAt: nowMs, heldWith: this.#inFlight };
    this.#held.add(held);
    const slot: LocalSlot = {
      release: (ending) => this.#end(held, ending, true),
      cancel: () => this.#end(held, undefined, false),
    };
    return { result: this.#result(true, limit, this.#inFlight), slot };
  }

  /** Frees the slots held past `maxHoldMs` as dropped; whether there were any. */
  #expire(nowMs: number): boolean {
    // Stryker disable next-line BooleanLiteral: with nothing expired, asking again refuses again
    let expired = false;
    for (const held of this.#held) {
      if (nowMs - held.admittedAt < this.#settings.maxHoldMs) break;
      this.#end(held, { dropped: true }, true);
      expired = true;
    }
    return expired;
  }

  /** A slot had back (once: a held slot is one still in the set); `measured` unless cancelled. */
  #end(held: Held, ending: Ending | undefined, measured: boolean): void {
    if (!this.#held.delete(held)) return;
    this.#inFlight--;
    held.partition.inFlight--;
    try {
      if (measured && ending?.measured !== false) this.#measure(held, ending);
    } finally {
      // A `dropped` option or an algorithm that throws must not strand those waiting for the slot.
      this.#line.serve();
    }
  }

  #measure({ partition, admittedAt, heldWith }: Held, ending: Ending | undefined): void {
    const { clock, droppedStatus } = this.#settings;
    const dropped = ending?.dropped ?? (ending?.status !== undefined && droppedStatus(ending.status));
    partition.completed++;
    if (dropped) partition.dropped++;
    this.algorithm.sample({ rttMs: clock() - admittedAt, inFlight: heldWith, dropped });
  }
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
