// Evaluates a request against several policies at once, all or nothing: a denial by one spends from none.
import type { AnyPolicy, PolicyResult } from './policy.js';

export interface Evaluation {
  readonly allowed: boolean;
  readonly results: readonly PolicyResult[];
  /** Index-aligned with the policies; `undefined` where nothing is written. */
  readonly writes: readonly ({ readonly state: unknown; readonly ttlMs: number } | undefined)[];
}

/**
 * The TypeScript twin of the Redis script's main loop. When any policy denies, the policies that would have
 * admitted the request report their unspent view (cost 0), because nothing was spent from them.
 */
export function evaluatePolicies(
  policies: readonly AnyPolicy[],
  states: readonly unknown[],
  nowMs: number,
  cost: number,
  dryRun: boolean,
): Evaluation {
  const transitions = policies.map((policy, i) => policy.evaluate(states[i], nowMs, cost));
  const allowed = transitions.every((t) => t.result.allowed);
  if (!allowed) {
    const results = transitions.map((t, i) =>
      t.result.allowed ? (policies[i] as AnyPolicy).evaluate(states[i], nowMs, 0).result : t.result,
    );
    return { allowed, results, writes: [] };
  }
  return {
    allowed,
    results: transitions.map((t) => t.result),
    // Spending nothing changes nothing worth a write (and must not open a window).
    writes:
      dryRun || cost === 0
        ? []
        : transitions.map((t) => (t.next === undefined ? undefined : { state: t.next, ttlMs: t.ttlMs })),
  };
}
