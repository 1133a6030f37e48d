// Decisions with hand-chosen figures for the header tests, and their fields in the order they are written.
import {
  type AnyPolicy,
  concurrency,
  type Decision,
  fixedWindow,
  type PolicyDecision,
  slidingWindowCounter,
  tokenBucket,
} from '../../src/index.js';

/** 2026-01-01T00:00:00.000Z, epoch second 1767225600. */
export const NOW = Date.UTC(2026, 0, 1);
export const minute = fixedWindow({ limit: 100, windowMs: 60_000 });

export function policyDecision(
  policy: AnyPolicy,
  remaining: number,
  resetMs: number,
  retryAfterMs = 0,
): PolicyDecision {
  return { allowed: retryAfterMs === 0, remaining, resetMs, retryAfterMs, policy };
}

/** A one-policy decision: allowed when no wait is given, a denial no wait cures when the wait is -1. */
export function decision(
  remaining: number,
  resetMs: number,
  retryAfterMs?: number,
  policy: AnyPolicy = minute,
): Decision {
  const denied = retryAfterMs !== undefined;
  return {
    allowed: !denied,
    limit: policy.limit,
    remaining,
    resetMs,
    ...(denied && retryAfterMs >= 0 ? { retryAfterMs } : {}),
    nowMs: NOW,
    policies: [policyDecision(policy, remaining, resetMs, retryAfterMs ?? 0)],
  };
}

/** A several-policy decision whose binding figures are `binding`'s. */
export function several(
  allowed: boolean,
  binding: PolicyDecision,
  policies: readonly PolicyDecision[],
  retryAfterMs?: number,
): Decision {
  return {
    allowed,
    limit: binding.policy.limit,
    remaining: binding.remaining,
    resetMs: binding.resetMs,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    nowMs: NOW,
    policies,
  };
}

export const burst = tokenBucket({ capacity: 10, refillPerSecond: 2, name: 'burst' });
export const daily = fixedWindow({ limit: 1000, windowMs: '1d', name: 'daily' });
export const sustained = slidingWindowCounter({ limit: 1000, windowMs: '1h', name: 'sustained' });
export const lifetime = tokenBucket({ capacity: 3, refillPerSecond: 0, name: 'lifetime' });
export const inFlight = concurrency({ max: 5, leaseMs: '10s', name: 'in-flight' });

/** Allowed, bound by the burst (3 left, full in 3.5 s), the day far from its limit. */
export const dailyAndBurst = several(true, policyDecision(burst, 3, 3500), [
  policyDecision(daily, 700, 3_600_000),
  policyDecision(burst, 3, 3500),
]);
/** Denied by the burst, which a wait of 0.5 s cures; the hour far from its limit. */
export const burstDenied = several(
  false,
  policyDecision(burst, 0, 5000, 500),
  [policyDecision(burst, 0, 5000, 500), policyDecision(sustained, 990, 7_200_000)],
  500,
);
/** Bound by a bucket that never refills, beside a concurrency limit. */
export const lifetimeAndSlots = several(true, policyDecision(lifetime, 2, -1), [
  policyDecision(lifetime, 2, -1),
  policyDecision(inFlight, 4, 10_000),
]);

/** express-rate-limit's partition keys (`printf %s KEY | sha256sum | cut -c1-12 | base64`). */
export const PK_203_0_113_7 = 'ZmVjNTI1NjVhYTBj';
export const PK_UNKNOWN = 'YjIzYTZhODQzOWMw';

/** Name and value pairs in the order written: express-rate-limit's order is part of matching it. */
export function fields(headers: Record<string, string>): [string, string][] {
  return Object.entries(headers);
}
