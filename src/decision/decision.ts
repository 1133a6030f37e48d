// A limiter's answer for one request: the binding policy's figures, plus every policy's own for the headers.

import type { Ending, PolicyFacts } from '../policies/local-policy.js';
import { LOCKOUT_NAME, lockedOut } from '../policies/lockout.js';
import { type AnyPolicy, advised, type PolicyResult } from '../policies/policy.js';
import { type DegradedMode, isFailMode, type StoreResponse } from '../stores/store.js';

export interface PolicyDecision extends PolicyResult {
  /** The policy as it was when it decided (a local policy's limit moves). */
  readonly policy: PolicyFacts;
}

export interface Decision {
  readonly allowed: boolean;
  /** The binding policy's quota. */
  readonly limit: number;
  /** Whole units left in the binding policy. */
  readonly remaining: number;
  /** Until the binding policy is back at rest; -1 when it never will. */
  readonly resetMs: number;
  /**
   * Present only on a denial that waiting can cure: the wait until this request's cost could pass; for a full
   * concurrency limit, at most its `retryAfterMs` (a slot frees whenever a request ends).
   */
  readonly retryAfterMs?: number;
  /** The store's clock when it decided (epoch ms). */
  readonly nowMs: number;
  /** Every policy's result, in the limiter's order. */
  readonly policies: readonly PolicyDecision[];
  /** Set when the store was unreachable: which fail mode made this decision. */
  readonly degraded?: DegradedMode;
  /**
   * Set on an admission booked ahead (by `wait`, whose place in line it is): how long after the store decided it
   * holds. `nowMs` and the figures are as of then.
   */
  readonly delayMs?: number;
  /** Set on a denial by the limiter's lockout (`blockMs`, `block()`): the identifier is locked out for now. */
  readonly blocked?: true;
  /**
   * Set on a denial by a local policy that answers with a status of its own (an adaptive concurrency limit's 503:
   * the server is busy, not the client over its quota).
   */
  readonly denyStatus?: number;
  /**
   * Present on an admission by a limiter with a concurrency policy: frees the slot this request holds. Call it
   * once the work is done, saying how it ended (an adaptive limit measures it, and backs off from a dropped one);
   * calling it again does nothing.
   */
  readonly release?: (ending?: Ending) => Promise<void>;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * The binding policy is, on a denial, the one that makes the client wait longest (a wait no time cures wins);
 * when allowed, the one with the fewest units left; of equals, the first.
 * Objects are built field by field: on Node 20, `{ ...object, extra }` costs more than the rest of an in-memory
 * decision (docs/benchmarks.md).
 */
export function toDecision(policies: readonly AnyPolicy[], response: StoreResponse): Decision {
  const { allowed } = response;
  let { results } = response;
  // A limiter's lockout is evaluated last, under a name no other policy may take; its own figures are never shown,
  // only its block.
  let blockMs: number | undefined;
  if ((policies[policies.length - 1] as AnyPolicy).name === LOCKOUT_NAME) {
    const lockout = results[results.length - 1] as PolicyResult;
    results = results.slice(0, policies.length - 1);
    // A fail mode's answer carries no state, so no block either.
    const known = !isFailMode(response.degraded);
    if (!lockout.allowed && known) blockMs = lockout.retryAfterMs;
  }
  const decisions: PolicyDecision[] = [];
  let binding: PolicyDecision | undefined;
  for (let i = 0; i < results.length; i++) {
    const policy = policies[i] as AnyPolicy;
    const told = advised(results[i] as PolicyResult, policy);
    const result = blockMs === undefined ? told : lockedOut(told, blockMs);
    const candidate = policyDecision(result, policy);
    decisions.push(candidate);
    if (
      binding === undefined ||
      (allowed ? candidate.remaining < binding.remaining : wait(candidate) > wait(binding))
    )
      binding = candidate;
  }
  const decision = bound(allowed, binding as PolicyDecision, response.nowMs, decisions);
  if (response.degraded !== undefined) decision.degraded = response.degraded;
  if (response.delayMs !== undefined) decision.delayMs = response.delayMs;
  if (blockMs !== undefined) decision.blocked = true;
  if (!allowed) retryAfter(decision, binding as PolicyDecision);
  return decision;
}

/**
 * A lone policy's decision from its own result, as `toDecision` makes it from a store's answer (same fields, same
 * order): the memory store's synchronous path, which builds no store response, calls it.
 */
export function soleDecision(policy: AnyPolicy, result: PolicyResult, nowMs: number): Decision {
  const only = policyDecision(advised(result, policy), policy);
  const decision = bound(result.allowed, only, nowMs, [only]);
  if (!result.allowed) retryAfter(decision, only);
  return decision;
}

function policyDecision(result: PolicyResult, policy: AnyPolicy): PolicyDecision {
  return {
    allowed: result.allowed,
    remaining: result.remaining,
    resetMs: result.resetMs,
    retryAfterMs: result.retryAfterMs,
    policy,
  };
}

/** The decision's own fields, from its binding policy's: one shape for every decision. */
function bound(
  allowed: boolean,
  binding: PolicyDecision,
  nowMs: number,
  policies: readonly PolicyDecision[],
): Mutable<Decision> {
  return {
    allowed,
    limit: binding.policy.limit,
    remaining: binding.remaining,
    resetMs: binding.resetMs,
    nowMs,
    policies,
  };
}

/** A denial's wait, when waiting can cure it. */
function retryAfter(decision: Mutable<Decision>, binding: PolicyDecision): void {
  if (binding.retryAfterMs >= 0) decision.retryAfterMs = binding.retryAfterMs;
}

/** How long a policy's result makes the client wait, for ranking: an admission least, a wait no time cures most. */
function wait(result: PolicyResult): number {
  if (result.allowed) return -1;
  return result.retryAfterMs < 0 ? Number.POSITIVE_INFINITY : result.retryAfterMs;
}
