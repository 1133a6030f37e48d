// A limiter's waiters in this process, one line per identifier: first come, first served, and only the first asks.
import { waitTimeoutError } from '../core/errors.js';
import { sleep } from './sleep.js';

/** One caller in line. */
interface Waiter {
  /** Its turn came: it is first in line. */
  readonly start: () => void;
  /** It can no longer pass in time: the first in line learnt that nobody passes before `atMs` (epoch ms). */
  readonly tooLate: (atMs: number) => void;
}

/** One identifier's line. */
interface Line {
  readonly waiters: Set<Waiter>;
  /** Ends the nap of the first in line, when it naps waiting for a release. */
  wake: (() => void) | undefined;
  /** A release came while the first in line was not napping: its next nap ends at once. */
  released: boolean;
}

/**
 * Callers of `wait` for one limiter line up per identifier. Only the first in line asks the store; the others
 * wait for their turn without a store call, so a thousand waiters cost about one call per admission rather than a
 * thousand per release, and nobody is overtaken by a later caller of this process. Another process's waiters are
 * not in this line: they take their chances when they ask.
 */
export class WaitLine {
  readonly #lines = new Map<string, Line>();

  /** How many identifiers have callers in line: an identifier whose line emptied is forgotten. */
  get size(): number {
    return this.#lines.size;
  }

  /** Joins `identifier`'s line. `leave()` must be called once the caller is done, whatever the outcome. */
  join(identifier: string): Place {
    let line = this.#lines.get(identifier);
    if (line === undefined) {
      // Stryker disable next-line BooleanLiteral: the first in line clears it before its first ask (asking())
      line = { waiters: new Set(), wake: undefined, released: false };
      this.#lines.set(identifier, line);
    }
    const joined = line;
    return new Place(joined, () => {
      // A line emptied and then joined again is a new line: only its own empty line is forgotten.
      if (joined.waiters.size === 0 && this.#lines.get(identifier) === joined) this.#lines.delete(identifier);
    });
  }

  /** A slot of `identifier` was freed in this process: the first in line asks again at once. */
  released(identifier: string): void {
    const line = this.#lines.get(identifier);
    if (line === undefined) return;
    if (line.wake === undefined) line.released = true;
    else line.wake();
  }
}

/** A caller's place in line. */
export class Place {
  readonly #line: Line;
  readonly #emptied: () => void;
  #waiter: Waiter | undefined;

  constructor(line: Line, emptied: () => void) {
    this.#line = line;
    this.#emptied = emptied;
  }

  /**
   * Resolves when this caller is first in line. Rejects with the signal's reason when it aborts, and with
   * `ERR_TOLLGATE_WAIT_TIMEOUT` at `deadline` (epoch ms), or as soon as the first in line learns that nobody
   * passes before it.
   */
  turn(deadline: number, maxWaitMs: number, signal: AbortSignal | undefined): Promise<void> {
    const { waiters } = this.#line;
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const abort = new AbortController();
      const settle = (outcome: () => void) => {
        abort.abort();
        // Stryker disable next-line StringLiteral: a listener left behind is only memory; it settles a settled promise
        signal?.removeEventListener('abort', onAbort);
        outcome();
      };
      // Stryker disable next-line OptionalChaining: only the signal calls it
      const onAbort = () => settle(() => reject(signal?.reason));
      const waiter: Waiter = {
        start: () => settle(resolve),
        tooLate: (atMs) => {
          if (atMs > deadline)
            settle(() =>
              reject(waitTimeoutError(maxWaitMs, `the earliest it could pass is in ${atMs - Date.now()} ms`)),
            );
        },
      };
      this.#waiter = waiter;
      waiters.add(waiter);
      if (waiters.size === 1) return waiter.start();
      // Stryker disable next-line ObjectLiteral,BooleanLiteral: settling removes it anyway
      signal?.addEventListener('abort', onAbort, { once: true });
      // Stryker disable next-line ArrowFunction: the timer only ends a wait whose deadline passed in line
      sleep(deadline - Date.now(), abort.signal).then(
        () => settle(() => reject(waitTimeoutError(maxWaitMs, 'earlier callers were still waiting'))),
        () => undefined,
      );
    });
  }

  /** The first in line naps until a slot is freed in this process, `ms` at most; rejects when the signal aborts. */
  nap(ms: number, signal: AbortSignal | undefined): Promise<void> {
    const line = this.#line;
    if (line.released) {
      line.released = false;
      return Promise.resolve();
    }
    return sleep(ms, signal, (end) => {
      line.wake = end;
    }).finally(() => {
      line.wake = undefined;
    });
  }

  /** Before asking: a release from now on is news to the answer. */
  asking(): void {
    this.#line.released = false;
  }

  /** The first in line learnt that nobody passes before `atMs` (epoch ms): callers whose deadline is sooner give up. */
  notBefore(atMs: number): void {
    // Stryker disable next-line ConditionalExpression: the first's own turn has come already; telling it changes nothing
    for (const waiter of this.#line.waiters) if (waiter !== this.#waiter) waiter.tooLate(atMs);
  }

  /** Leaves the line; the next caller's turn comes when this one was first. */
  leave(): void {
    const { waiters } = this.#line;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    // A caller that never got in line (its signal had aborted) leaves nothing behind either.
    // Stryker disable next-line ConditionalExpression,LogicalOperator: a turn that came already comes to nothing again
    const first = waiter !== undefined && waiters.values().next().value === waiter;
    if (waiter !== undefined) waiters.delete(waiter);
    const next = waiters.values().next();
    if (next.done) this.#emptied();
    // Stryker disable next-line ConditionalExpression: the same
    else if (first) next.value.start();
  }
}
