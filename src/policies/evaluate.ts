// Evaluates a request against several policies at once, all or nothing: a denial by one spends from none.
import type { AnyPolicy, PolicyResult, Transition } from './policy.js';

export interface Evaluation {
  readonly allowed: boolean;
  readonly results: readonly PolicyResult[];
  /**
   * What to store, index-aligned with the policies: each policy's transition (its `next` and `ttlMs`); empty when
   * nothing was spent.
   */
  readonly writes: readonly Transition<unknown>[];
}

const NO_WRITES: Evaluation['writes'] = Object.freeze([]);

/**
 * The TypeScript twin of the Redis script's main loop. When any policy denies, the policies that would have
 * admitted the request report their unspent view (cost 0), because nothing was spent from them.
 * Plain loops rather than map/every: this runs on every request, and most limiters have one policy.
 */
export function evaluatePolicies(
  policies: readonly AnyPolicy[],
  states: readonly unknown[],
  nowMs: number,
  cost: number,
  dryRun: boolean,
): Evaluation {
  const count = policies.length;
  const transitions: Transition<unknown>[] = [];
  let allowed = true;
  for (let i = 0; i < count; i++) {
    const transition = (policies[i] as AnyPolicy).evaluate(states[i], nowMs, cost);
    if (!transition.result.allowed) allowed = false;
    transitions.push(transition);
  }
  const results: PolicyResult[] = [];
  for (let i = 0; i < count; i++) {
    const { result } = transitions[i] as Transition<unknown>;
    results.push(
      allowed || !result.allowed ? result : (policies[i] as AnyPolicy).evaluate(states[i], nowMs, 0).result,
    );
  }
  // Spending nothing changes nothing worth a write (and must not open a window).
  if (!allowed || dryRun || cost === 0) return { allowed, results, writes: NO_WRITES };
  return { allowed, results, writes: transitions };
}
