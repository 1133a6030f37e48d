// A sleep of any length that an AbortSignal ends: a Node timer holds at most 2^31 - 1 ms, so longer sleeps chain them.
/** The longest delay one Node timer honours (about 24.8 days): a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Resolves after `ms`, or as soon as the function handed to `early` is called; rejects with the signal's reason as
 * soon as it aborts (at once when it already has).
 */
export function sleep(ms: number, signal?: AbortSignal, early?: (end: () => void) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    let left = ms;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const settle = (outcome: () => void) => () => {
      clearTimeout(timer);
      // Stryker disable next-line StringLiteral: a listener left behind is only memory; it settles a settled promise
      signal?.removeEventListener('abort', onAbort);
      outcome();
    };
    // Stryker disable next-line OptionalChaining: only the signal calls it
    const onAbort = settle(() => reject(signal?.reason));
    const done = settle(resolve);
    const arm = () => {
      const chunk = Math.min(left, MAX_TIMER_MS);
      left -= chunk;
      timer = setTimeout(left > 0 ? arm : done, chunk);
    };
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: settling removes it anyway
    signal?.addEventListener('abort', onAbort, { once: true });
    early?.(done);
    arm();
  });
}
