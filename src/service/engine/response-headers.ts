// The header fields a limited request's answer carries: the IETF RateLimit fields of one descriptor, and Retry-After.
import { rateLimitHeaders, retryAfterValue } from '../../decision/headers.js';
import { isFailMode } from '../../stores/store.js';
import { Code, type HeaderValue } from '../protocol/messages.js';
import type { Evaluated } from './descriptor-status.js';

/**
 * `RateLimit-Policy` and `RateLimit` (draft-10 structured fields) for the most restrictive descriptor, the one the
 * reference puts in its own rate limit headers: the last one over its limit (not in shadow or quota mode), else
 * the first with the fewest requests remaining; a fail mode's admission has no figures, so it is passed over. One
 * descriptor rather than all: a client keeps to the most restrictive policy anyway, and policy names, unique within
 * one rule, may repeat across rules. `Retry-After` (whole seconds, rounded up) comes with OVER_LIMIT, for the
 * longest wait among the descriptors that made it, and only when waiting can cure each of them (not a ban, nor
 * more hits than the limit).
 */
export function responseHeaders(
  evaluated: readonly Evaluated[],
  overBy: readonly Evaluated[],
): readonly HeaderValue[] {
  const headers: HeaderValue[] = [];
  const binding = mostRestrictive(evaluated);
  if (binding !== undefined) {
    const fields = rateLimitHeaders(binding.decision, 'draft-10');
    for (const [key, value] of Object.entries(fields))
      if (key !== 'Retry-After') headers.push({ key, value });
  }
  const waitMs = longestWait(overBy);
  if (waitMs !== undefined) headers.push({ key: 'Retry-After', value: retryAfterValue(waitMs) });
  return headers;
}

function mostRestrictive(evaluated: readonly Evaluated[]): Evaluated | undefined {
  let binding: Evaluated | undefined;
  let least = Number.POSITIVE_INFINITY;
  for (const entry of evaluated) {
    const { status, rule, decision } = entry;
    // A fail mode's admission knows nothing of the quota and denies nothing: it has no figures to show.
    if (decision.allowed && isFailMode(decision.degraded)) continue;
    if (status.limitRemaining < least) {
      binding = entry;
      least = status.limitRemaining;
    }
    if (status.code === Code.OVER_LIMIT && !rule.quotaMode) {
      binding = entry;
      least = 0;
    }
  }
  return binding;
}

/** The longest wait that cures every refusal in `overBy`; undefined when there is none, or one no wait cures. */
function longestWait(overBy: readonly Evaluated[]): number | undefined {
  let longest: number | undefined;
  for (const { decision } of overBy) {
    if (decision.retryAfterMs === undefined) return undefined;
    longest = Math.max(longest ?? 0, decision.retryAfterMs);
  }
  return longest;
}
