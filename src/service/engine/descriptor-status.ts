// A counted descriptor's status, as the reference reports it, and its level for the statistics.
import { floorDiv } from '../../core/integer.js';
import type { Decision } from '../../decision/decision.js';
import { isFailMode } from '../../stores/store.js';
import type { LimitMatch, LimitRule } from '../config/types.js';
import { Code, type DescriptorStatus } from '../protocol/messages.js';
import type { DescriptorOutcome } from './observer.js';

/** A descriptor that was counted (or checked) under its limit, and what it was answered. */
export interface Evaluated {
  readonly match: LimitMatch;
  readonly rule: LimitRule;
  readonly hits: number;
  readonly decision: Decision;
  /** The store failed and a fail mode or the memory fallback answered. */
  readonly degraded: boolean;
  readonly status: DescriptorStatus;
}

/** `limit_remaining` is a uint32: an unlimited descriptor reports its greatest value, as the reference does. */
export const UNLIMITED_REMAINING = 4_294_967_295;

/**
 * Over the limit: OVER_LIMIT with nothing remaining, except in shadow mode, where the reference reports OK (still
 * with nothing remaining) and lets the request through. `current_limit` is the rule's, as configured.
 */
export function countedStatus(rule: LimitRule, decision: Decision): DescriptorStatus {
  const over = !decision.allowed;
  return {
    code: over && !rule.shadowMode ? Code.OVER_LIMIT : Code.OK,
    currentLimit: { name: rule.name, requestsPerUnit: rule.requestsPerUnit, unit: rule.unit },
    limitRemaining: over ? 0 : Math.min(decision.remaining, UNLIMITED_REMAINING),
    // Whole seconds, rounded up, as the reference sends them: so Envoy's reset header, the JSON answer and the
    // RateLimit field (also whole seconds, never early) tell a client the same instant.
    durationUntilResetMs: Math.ceil(untilReset(rule, decision) / 1000) * 1000,
  };
}

/**
 * The reference reports the time to the end of its current window, counted in or not. The decision says that
 * once its window holds a count; an aligned window with none yet (a ban of 0, a refused first request, a fail
 * mode's answer) says 0, so its end is worked out from the clock, where every client's window ends alike.
 */
function untilReset(rule: LimitRule, decision: Decision): number {
  const windowMs = rule.alignedWindowMs;
  if (decision.resetMs > 0 || windowMs === undefined) return Math.max(0, decision.resetMs);
  return windowMs - (decision.nowMs - floorDiv(decision.nowMs, windowMs) * windowMs);
}

/** The reference's near-limit ratio: a count past 80% of the limit, still allowed, is near it. */
const NEAR_RATIO = Math.fround(0.8);

/**
 * `near` when the count after this request is above the reference's threshold, `floor(limit x 0.8)` in its
 * 32-bit float arithmetic. A fail mode's answer knows no count: allowed is within, refused is over.
 */
export function outcomeLevel(decision: Decision): DescriptorOutcome['level'] {
  if (!decision.allowed) return 'over';
  if (isFailMode(decision.degraded)) return 'within';
  const threshold = Math.floor(Math.fround(Math.fround(decision.limit) * NEAR_RATIO));
  return decision.limit - decision.remaining > threshold ? 'near' : 'within';
}
