// A limiter's answer for one request: the binding policy's figures, plus every policy's own for the headers.
import type { AnyPolicy, PolicyResult } from './policies/policy.js';
import type { DegradedMode, StoreResponse } from './stores/store.js';

export interface PolicyDecision extends PolicyResult {
  readonly policy: AnyPolicy;
}

export interface Decision {
  readonly allowed: boolean;
  /** The binding policy's quota. */
  readonly limit: number;
  /** Whole units left in the binding policy. */
  readonly remaining: number;
  /** Until the binding policy is back at rest; -1 when it never will. */
  readonly resetMs: number;
  /** Present only on a denial that waiting can cure: the wait until this request's cost could pass. */
  readonly retryAfterMs?: number;
  /** The store's clock when it decided (epoch ms). */
  readonly nowMs: number;
  /** Every policy's result, in the limiter's order. */
  readonly policies: readonly PolicyDecision[];
  /** Set when the store was unreachable: which fail mode made this decision. */
  readonly degraded?: DegradedMode;
}

/**
 * The binding policy is, on a denial, the one that makes the client wait longest (a wait no time cures wins);
 * when allowed, the one with the fewest units left.
 */
export function toDecision(policies: readonly AnyPolicy[], response: StoreResponse): Decision {
  const decisions = response.results.map((result, i) => ({ ...result, policy: policies[i] as AnyPolicy }));
  let binding = decisions[0] as PolicyDecision;
  for (const candidate of decisions) {
    if (response.allowed ? candidate.remaining < binding.remaining : binds(candidate, binding))
      binding = candidate;
  }
  const base = {
    allowed: response.allowed,
    limit: binding.policy.limit,
    remaining: binding.remaining,
    resetMs: binding.resetMs,
    nowMs: response.nowMs,
    policies: decisions,
  };
  const decision: Decision =
    response.degraded === undefined ? base : { ...base, degraded: response.degraded };
  return !response.allowed && binding.retryAfterMs >= 0
    ? { ...decision, retryAfterMs: binding.retryAfterMs }
    : decision;
}

function binds(candidate: PolicyDecision, current: PolicyDecision): boolean {
  if (candidate.allowed) return false;
  if (current.allowed) return true;
  if (current.retryAfterMs < 0) return false;
  return candidate.retryAfterMs < 0 || candidate.retryAfterMs > current.retryAfterMs;
}
