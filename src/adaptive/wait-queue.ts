// Callers waiting for an adaptive limit's slot, served first come, first served as slots free or the limit rises.
import { waitTimeoutError } from '../core/errors.js';
import type { LocalSlot, LocalWait } from '../policies/local-policy.js';

/** The longest delay one Node timer honours. */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Waiter {
  readonly partition: string | undefined;
  readonly grant: (slot: LocalSlot) => void;
}

/** Takes a slot for `partition` if one is free for it now. */
export type TryAdmit = (partition: string | undefined) => LocalSlot | undefined;

export class WaitQueue {
  readonly #waiters: Waiter[] = [];
  readonly #tryAdmit: TryAdmit;

  constructor(tryAdmit: TryAdmit) {
    this.#tryAdmit = tryAdmit;
  }

  get length(): number {
    return this.#waiters.length;
  }

  /** Joins the end of the line; settles with a slot, or rejects at the deadline or on abort, leaving the line. */
  join({ partition, maxWaitMs, signal }: LocalWait): Promise<LocalSlot> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<LocalSlot>((resolve, reject) => {
      const leave = (error: unknown) => {
        const at = this.#waiters.indexOf(waiter);
        if (at >= 0) this.#waiters.splice(at, 1);
        clearTimeout(timer);
        signal?.removeEventListener('abort', aborted);
        reject(error);
        // The one who left may have held up the line behind it (a partition that could not borrow).
        this.serve();
      };
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
        grant: (slot) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', aborted);
          resolve(slot);
        },
      };
      signal?.addEventListener('abort', aborted, { once: true });
      this.#waiters.push(waiter);
      this.serve();
    });
  }

  /** Hands free slots to the line in order; the first who cannot go yet holds everyone behind it. */
  serve(): void {
    while (this.#waiters.length > 0) {
      const first = this.#waiters[0] as Waiter;
      const slot = this.#tryAdmit(first.partition);
      if (slot === undefined) return;
      this.#waiters.shift();
      first.grant(slot);
    }
  }
}
