// A policy's run in a few figures: what it admitted and rejected, its densest window, and the waits it told.

/** One request and what the policy told it. */
export interface TimelineEntry {
  readonly timeMs: number;
  readonly allowed: boolean;
  readonly remaining: number;
  /** 0 when allowed, -1 when no wait would have helped. */
  readonly retryAfterMs: number;
  /** The policy's level right after this request: see `PolicySimulation.level`. */
  readonly level: number;
}

export interface SimulationSummary {
  readonly admitted: number;
  readonly rejected: number;
  /**
   * The most requests admitted in any span shorter than the policy's nominal window `windowMs` (the span a
   * sliding window log counts, `(t - windowMs, t]`); the whole run for a token bucket that never refills.
   */
  readonly maxAdmittedInWindow: number;
  /** The longest `retryAfterMs` a rejected client was told; 0 when none was told to wait. */
  readonly longestRetryAfterMs: number;
  /** Rejections told that no wait would help (`retryAfterMs` -1): not counted in `longestRetryAfterMs`. */
  readonly rejectedForever: number;
}

export function summarize(timeline: readonly TimelineEntry[], windowMs: number): SimulationSummary {
  const admittedAt = timeline.filter((e) => e.allowed).map((e) => e.timeMs);
  let maxAdmittedInWindow = windowMs === 0 ? admittedAt.length : 0;
  if (windowMs > 0) {
    // Two pointers over the admitted times: the span (t - windowMs, t] ending at each admission.
    for (let right = 0, left = 0; right < admittedAt.length; right++) {
      const t = admittedAt[right] as number;
      while ((admittedAt[left] as number) <= t - windowMs) left++;
      maxAdmittedInWindow = Math.max(maxAdmittedInWindow, right - left + 1);
    }
  }
  const rejected = timeline.filter((e) => !e.allowed);
  return {
    admitted: admittedAt.length,
    rejected: rejected.length,
    maxAdmittedInWindow,
    longestRetryAfterMs: rejected.reduce((longest, e) => Math.max(longest, e.retryAfterMs), 0),
    rejectedForever: rejected.filter((e) => e.retryAfterMs < 0).length,
  };
}
