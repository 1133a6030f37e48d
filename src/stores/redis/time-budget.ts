// Time bounds on Redis calls: a documented budget holds however Redis misbehaves (hung, slow, or gone).
import { type TollgateError, timeoutError } from '../../core/errors.js';

/** What is left of one budget of `ms` from now, for work done in steps (never below 1 ms). */
export function budget(ms: number): () => number {
  const deadline = performance.now() + ms;
  return () => Math.max(1, Math.ceil(deadline - performance.now()));
}

/**
 * `promise`, or `ERR_TOLLGATE_TIMEOUT` after `ms` (counted in `metrics.timeouts`). One promise and one timer per
 * call: `Promise.race` plus `finally` cost three more promises.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, metrics: { timeouts: number }): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      metrics.timeouts++;
      reject(timeoutError(`Redis did not answer within ${ms} ms`));
    }, ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** A call still waiting for its answer, in the order the calls began. */
interface Waiting {
  readonly deadline: number;
  readonly reject: (error: TollgateError) => void;
  settled: boolean;
}

/**
 * `withTimeout` for a stream of calls that share one budget, with one timer between them: their deadlines come in
 * the order the calls begin, so the earliest is always the oldest call still waiting. A timer per call, armed and
 * cleared, cost a lone decision more than the rest of the store's own work for it (docs/benchmarks.md has the
 * figure). The timer holds the process open only while a call is waiting, as a timer per call
 * did: it stays armed, unref'd, through the gaps between calls.
 */
export class Deadlines {
  readonly #ms: number;
  readonly #metrics: { timeouts: number };
  readonly #now: () => number;
  #waiting: Waiting[] = [];
  #head = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(ms: number, metrics: { timeouts: number }, now: () => number = () => performance.now()) {
    this.#ms = ms;
    this.#metrics = metrics;
    this.#now = now;
  }

  /** `promise`, or `ERR_TOLLGATE_TIMEOUT` once the budget has passed (counted in `metrics.timeouts`). */
  bound<T>(promise: Promise<T>): Promise<T> {
    return new Promise((resolve, reject) => {
      const waiting: Waiting = { deadline: this.#now() + this.#ms, reject, settled: false };
      this.#waiting.push(waiting);
      if (this.#timer === undefined) this.#timer = setTimeout(() => this.#expire(), this.#ms);
      else if (this.#waiting.length === 1) this.#timer.ref();
      promise.then(
        (value) => {
          this.#settle(waiting);
          resolve(value);
        },
        (error: unknown) => {
          this.#settle(waiting);
          reject(error);
        },
      );
    });
  }

  #settle(waiting: Waiting): void {
    waiting.settled = true;
    // Calls mostly end in order: the queue is cut as they do, so it stays as long as the calls in flight.
    while (this.#head < this.#waiting.length && (this.#waiting[this.#head] as Waiting).settled) this.#head++;
    if (this.#head === this.#waiting.length) {
      this.#waiting = [];
      this.#head = 0;
      this.#timer?.unref();
    }
  }

  #expire(): void {
    this.#timer = undefined;
    const now = this.#now();
    for (; this.#head < this.#waiting.length; this.#head++) {
      const waiting = this.#waiting[this.#head] as Waiting;
      if (waiting.settled) continue;
      if (waiting.deadline > now) {
        this.#timer = setTimeout(() => this.#expire(), waiting.deadline - now);
        return;
      }
      waiting.settled = true;
      this.#metrics.timeouts++;
      waiting.reject(timeoutError(`Redis did not answer within ${this.#ms} ms`));
    }
    this.#waiting = [];
    this.#head = 0;
  }
}
