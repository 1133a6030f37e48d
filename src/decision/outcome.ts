// One word for what happened to a request, shared by metrics and logs so both tell the same story.

import { isFailMode } from '../stores/store.js';
import type { Decision } from './decision.js';

export type DecisionOutcome =
  | 'allowed'
  | 'denied'
  | 'locked-out'
  | 'degraded-allowed'
  | 'degraded-denied'
  | 'shadow';

export const DECISION_OUTCOMES: readonly DecisionOutcome[] = [
  'allowed',
  'denied',
  'locked-out',
  'degraded-allowed',
  'degraded-denied',
  'shadow',
];

/**
 * `shadow` is a denial that shadow mode let through: the number to watch before enforcing a new limit. `locked-out`
 * is a denial by a lockout (`blockMs`, `block()`). A `degraded-*` decision was made without the shared state (fail
 * mode or local fallback).
 */
export function decisionOutcome(decision: Decision, shadow: boolean): DecisionOutcome {
  if (decision.allowed) return decision.degraded === undefined ? 'allowed' : 'degraded-allowed';
  if (shadow) return 'shadow';
  if (decision.degraded !== undefined) return 'degraded-denied';
  return decision.blocked ? 'locked-out' : 'denied';
}

/**
 * Allowed, but with under a fifth of the limit left: clients about to be denied. Fail-mode answers carry no
 * real balance, so they never count.
 */
export function isNearLimit(decision: Decision): boolean {
  if (isFailMode(decision.degraded)) return false;
  return decision.allowed && decision.remaining < decision.limit * 0.2;
}
