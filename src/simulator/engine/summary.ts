// A limiter's run in a few figures: what it admitted and rejected, its densest window, the waits it told, its lockouts and slots.

/** One request and what the limiter told it. */
export interface TimelineEntry {
  readonly timeMs: number;
  readonly allowed: boolean;
  readonly remaining: number;
  /** 0 when allowed, -1 when no wait would have helped. */
  readonly retryAfterMs: number;
  /** The policy's level right after this request: see `PolicySimulation.level`. */
  readonly level: number;
  /**
   * On a denial: `'lockout'` when the identifier was already locked out (whatever the policy would have said),
   * `'policy'` when the policy denied it (which starts a lockout, when there is one).
   */
  readonly deniedBy?: 'policy' | 'lockout';
}

/** An admitted request's slot given back when its service time ends (a refund naming its lease). */
export interface Release {
  readonly timeMs: number;
  /** Slots held right after it. */
  readonly level: number;
  /** The lease had expired before the request finished: its slot was already free, and the release freed nothing. */
  readonly leaseExpired?: true;
}

export interface SimulationSummary {
  readonly admitted: number;
  readonly rejected: number;
  /**
   * The most requests admitted in any span shorter than the policy's nominal window `windowMs` (the span a
   * sliding window log counts, `(t - windowMs, t]`); the whole run for a policy without one (a token bucket that
   * never refills, a concurrency limit).
   */
  readonly maxAdmittedInWindow: number;
  /** The longest `retryAfterMs` a rejected client was told; 0 when none was told to wait. */
  readonly longestRetryAfterMs: number;
  /** Rejections told that no wait would help (`retryAfterMs` -1): not counted in `longestRetryAfterMs`. */
  readonly rejectedForever: number;
  /** With a lockout: the rejections while locked out (`deniedBy: 'lockout'`); the others were the policy's. */
  readonly rejectedByLockout?: number;
  /** For a concurrency limit: the most slots held at once (by the policy's count, right after each request). */
  readonly maxInFlight?: number;
  /** For a concurrency limit: releases that found their lease expired (the request outlived `leaseMs`). */
  readonly leaseExpiries?: number;
}

export interface RunRecord {
  readonly timeline: readonly TimelineEntry[];
  readonly releases: readonly Release[];
  /** The policy's nominal window, 0 for none. */
  readonly windowMs: number;
  readonly lockout: boolean;
  /** A policy whose requests hold slots (a concurrency limit): its figures are slots, not a window's. */
  readonly leased: boolean;
}

export function summarize({ timeline, releases, windowMs, lockout, leased }: RunRecord): SimulationSummary {
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
  const summary: SimulationSummary = {
    admitted: admittedAt.length,
    rejected: rejected.length,
    maxAdmittedInWindow,
    longestRetryAfterMs: rejected.reduce((longest, e) => Math.max(longest, e.retryAfterMs), 0),
    rejectedForever: rejected.filter((e) => e.retryAfterMs < 0).length,
  };
  return {
    ...summary,
    ...(lockout ? { rejectedByLockout: rejected.filter((e) => e.deniedBy === 'lockout').length } : {}),
    ...(leased
      ? {
          maxInFlight: timeline.reduce((most, e) => Math.max(most, e.level), 0),
          leaseExpiries: releases.filter((r) => r.leaseExpired).length,
        }
      : {}),
  };
}
