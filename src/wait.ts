// limiter.wait(): ask, and when denied sleep until the retry time (or the booked instant), within a deadline.
import type { Decision } from './decision.js';
import { TollgateError } from './errors.js';

export interface WaitOptions {
  /** Units to spend. Default: the limiter's cost. */
  readonly cost?: number;
  /** Aborting it rejects the wait at once with the signal's reason. */
  readonly signal?: AbortSignal;
  /** Give up as soon as it is clear the request cannot pass within this many ms. Default: no limit. */
  readonly maxWaitMs?: number;
}

/** The longest delay Node's timers honour: the default deadline, and the longest single sleep. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** How a limiter takes part in a wait. */
export interface Waiting {
  /** A consume that may be booked up to `maxDelayMs` ahead. */
  attempt(maxDelayMs: number): Promise<Decision>;
  /** Gives back an admission the caller no longer wants (its units, as that decision spent them, and its slot). */
  giveBack(decision: Decision): Promise<void>;
  /** Calls `wake` when a slot of this identifier is released in this process; returns the unsubscribe. */
  onRelease(wake: () => void): () => void;
}

export async function waitFor(waiting: Waiting, options: WaitOptions = {}): Promise<Decision> {
  const { signal } = options;
  const maxWaitMs = options.maxWaitMs ?? MAX_TIMER_MS;
  if (!Number.isSafeInteger(maxWaitMs) || maxWaitMs < 0) {
    throw new TollgateError(
      'ERR_TOLLGATE_ARGUMENT',
      `\`maxWaitMs\` must be a non-negative integer (received ${maxWaitMs})`,
    );
  }
  const deadline = Date.now() + maxWaitMs;
  for (;;) {
    signal?.throwIfAborted();
    const left = Math.max(0, deadline - Date.now());
    const decision = await waiting.attempt(left);
    if (decision.allowed) {
      // A booked place is kept even when the caller leaves: giving it back could let a later caller go at the
      // instant someone already in line goes.
      if (decision.delayMs !== undefined) await sleep(decision.delayMs, signal);
      else if (signal?.aborted) {
        await waiting.giveBack(decision).catch(() => undefined);
        signal.throwIfAborted();
      }
      return decision;
    }
    const retry = decision.retryAfterMs;
    if (retry === undefined || retry > left) throw tooLong(maxWaitMs, retry);
    // A concurrency slot freed here is worth asking again for at once; one freed elsewhere is found at `retry`.
    await sleep(retry, signal, waiting.onRelease);
  }
}

function tooLong(maxWaitMs: number, retry: number | undefined): TollgateError {
  const why =
    retry === undefined ? 'it can never pass at this cost' : `the earliest it could pass is in ${retry} ms`;
  return new TollgateError(
    'ERR_TOLLGATE_WAIT_TIMEOUT',
    `the request cannot pass within \`maxWaitMs\` (${maxWaitMs} ms): ${why}`,
  );
}

/** Resolves after `ms` (or on a wake-up), rejects with the signal's reason as soon as it aborts. */
function sleep(
  ms: number,
  signal: AbortSignal | undefined,
  onWake?: (wake: () => void) => () => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    // An abort while the store was deciding: a listener added now would never hear it.
    signal?.throwIfAborted();
    const settle = (outcome: () => void) => () => {
      clearTimeout(timer);
      // Stryker disable next-line StringLiteral: a listener left behind is only memory; it settles a settled promise
      signal?.removeEventListener('abort', onAbort);
      unsubscribe?.();
      outcome();
    };
    // Stryker disable next-line OptionalChaining: only the signal calls it
    const onAbort = settle(() => reject(signal?.reason));
    const timer = setTimeout(settle(resolve), Math.min(ms, MAX_TIMER_MS));
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: settling removes it anyway
    signal?.addEventListener('abort', onAbort, { once: true });
    const unsubscribe = onWake?.(settle(resolve));
  });
}
