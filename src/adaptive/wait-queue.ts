// Callers waiting for an adaptive limit's slot, served in arrival order as slots free or the limit rises.
import { waitTimeoutError } from '../core/errors.js';
import type { LocalAdmission, LocalWait } from '../policies/local-policy.js';

interface Waiter {
  readonly partition: string | undefined;
  readonly grant: (admission: LocalAdmission) => void;
}

/** Takes a slot for `partition` if one is free for it now. */
export type TryAdmit = (partition: string | undefined) => LocalAdmission | undefined;

/** The longest delay one Node timer honours. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class WaitQueue {
  readonly #waiters: Waiter[] = [];
  readonly #tryAdmit: TryAdmit;
  readonly #retryMs: number;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #serving = false;
  // Stryker disable next-line BooleanLiteral: serve() clears it before every turn
  #again = false;

  /**
   * `retryMs`: how long after a turn that left callers waiting to serve them again, though no slot was released:
   * room can come without a release (a partition's guarantee lapsing, a limit raised on a timer).
   */
  constructor(tryAdmit: TryAdmit, retryMs: number) {
    this.#tryAdmit = tryAdmit;
    this.#retryMs = retryMs;
  }

  get length(): number {
    return this.#waiters.length;
  }

  /** Joins the end of the line; settles with a slot, or rejects at the deadline or on abort, leaving the line. */
  join({ partition, maxWaitMs, signal }: LocalWait): Promise<LocalAdmission> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<LocalAdmission>((resolve, reject) => {
      const leave = (error: unknown) => {
        const at = this.#waiters.indexOf(waiter);
        if (at >= 0) this.#waiters.splice(at, 1);
        clearTimeout(timer);
        signal?.removeEventListener('abort', aborted);
        reject(error);
      };
      // Stryker disable next-line OptionalChaining: only the signal calls it
      const aborted = () => leave(signal?.reason);
      // Beyond what one timer honours (about 24.8 days) a wait has no deadline: a timer would fire at once.
      const timer =
        maxWaitMs > MAX_TIMER_MS
          ? undefined
          : setTimeout(
              () => leave(waitTimeoutError(maxWaitMs, 'no slot of the adaptive limit freed in time')),
              maxWaitMs,
            );
      const waiter: Waiter = {
        partition,
        grant: (admission) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', aborted);
          resolve(admission);
        },
      };
      // Stryker disable next-line ObjectLiteral,BooleanLiteral: leaving or being granted removes it anyway
      signal?.addEventListener('abort', aborted, { once: true });
      this.#waiters.push(waiter);
      this.serve();
    });
  }

  /**
   * Hands free slots to the line in arrival order. A caller that cannot go yet (its partition may not borrow what
   * is free) lets those behind it go, so that one partition's wait never holds up another's guarantee.
   */
  serve(): void {
    // A turn may free slots itself (an admission expiring those held too long), which serves the line again: that
    // turn is left to this one, which goes round once more, so that no waiter is asked twice at once.
    if (this.#serving) {
      this.#again = true;
      return;
    }
    this.#serving = true;
    try {
      do {
        this.#again = false;
        this.#turn();
      } while (this.#again);
    } finally {
      this.#serving = false;
    }
  }

  #turn(): void {
    for (let i = 0; i < this.#waiters.length; ) {
      const waiter = this.#waiters[i] as Waiter;
      const admission = this.#tryAdmit(waiter.partition);
      if (admission === undefined) i++;
      else {
        this.#waiters.splice(i, 1);
        waiter.grant(admission);
      }
    }
    if (this.#waiters.length > 0 && this.#retry === undefined) {
      this.#retry = setTimeout(() => {
        this.#retry = undefined;
        this.serve();
      }, this.#retryMs);
      // A line of callers that all gave up must not keep the process alive.
      this.#retry.unref();
    }
  }
}
