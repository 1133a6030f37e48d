// The simulated service: N workers behind a FIFO queue, log-normal service times, and a client timeout.
import type { Random } from '../algorithms/algorithm.js';
import { standardNormal } from './seeded-random.js';

export interface ServiceModel {
  /** Requests the service works on at once: its true capacity in concurrency. */
  readonly workers: number;
  /** The mean service time at normal speed, in ms. */
  readonly meanServiceMs: number;
  /** The log-normal's sigma: the spread of service times. */
  readonly sigma: number;
  /** A request not answered this long after its admission is given up on by its client: dropped, not goodput. */
  readonly timeoutMs: number;
}

/**
 * 20 workers of 50 ms on average: a capacity of exactly 400 requests/s. Sigma 0.3 makes the unloaded p99 twice
 * the median (96 ms against 48 ms), the spread of a service doing real work (a database round trip or two) and no
 * pathological tail. The timeout of 1 s is twenty mean service times: only a long queue reaches it.
 */
export const DEFAULT_SERVICE: ServiceModel = { workers: 20, meanServiceMs: 50, sigma: 0.3, timeoutMs: 1000 };

/** The standard normal's 99th percentile. */
const Z_99 = 2.3263478740408408;

/** The log-normal's median: its mean is `median × e^(σ²/2)`. */
export function medianServiceMs(model: ServiceModel): number {
  return model.meanServiceMs / Math.exp((model.sigma * model.sigma) / 2);
}

/** Requests per second the service completes when every worker is busy, at normal speed: N / mean service time. */
export function capacityPerSecond(model: ServiceModel): number {
  return (model.workers * 1000) / model.meanServiceMs;
}

/** The p99 of the service time alone (no queueing): the latency a limit should hold the p99 near. */
export function unloadedP99Ms(model: ServiceModel): number {
  return medianServiceMs(model) * Math.exp(model.sigma * Z_99);
}

/** One request's work at normal speed, in ms. */
export function drawServiceMs(model: ServiceModel, random: Random): number {
  return medianServiceMs(model) * Math.exp(model.sigma * standardNormal(random));
}

/** A request as the service sees it. */
export interface Job {
  /** Its work in ms at normal speed; a slowdown multiplies it when it starts. */
  readonly workMs: number;
  /** Its client gave up: a job still queued is skipped, one being served runs on (the server cannot tell). */
  abandoned: boolean;
}

/**
 * The workers as a semaphore with a FIFO queue: a job admitted beyond `workers` waits, and its wait is part of its
 * latency. The caller keeps the clock and schedules each job's end.
 */
export class Service<J extends Job> {
  readonly #workers: number;
  readonly #queue: J[] = [];
  #head = 0;
  #busy = 0;

  constructor(workers: number) {
    this.#workers = workers;
  }

  /** Jobs waiting for a worker, abandoned ones that are still in line included. */
  get queued(): number {
    return this.#queue.length - this.#head;
  }

  /** Takes `job`: true if a worker starts it now, false if it waits. */
  enter(job: J): boolean {
    if (this.#busy < this.#workers) {
      this.#busy++;
      return true;
    }
    this.#queue.push(job);
    return false;
  }

  /** A worker is done: the next job it starts (its client still waiting), if any. */
  finish(): J | undefined {
    this.#busy--;
    while (this.#head < this.#queue.length) {
      const next = this.#queue[this.#head++] as J;
      if (next.abandoned) continue;
      this.#busy++;
      this.#compact();
      return next;
    }
    this.#compact();
    return undefined;
  }

  /** Drops the served part of the queue now and then, so that it does not grow with the run. */
  #compact(): void {
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue.splice(0, this.#head);
      this.#head = 0;
    }
  }
}
