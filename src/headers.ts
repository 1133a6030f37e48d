// Pure: a decision to rate-limit header fields, in the IETF draft's form or the widely deployed older one.
import type { Decision } from './decision.js';

/**
 * - `'draft-6'`: `RateLimit-Limit/Remaining/Reset` plus `X-RateLimit-Limit/Remaining/Reset` (ISO-8601): what
 *   most clients parse today.
 * - `'draft-10'`: draft-ietf-httpapi-ratelimit-headers-10 and later, `RateLimit-Policy` and `RateLimit` as
 *   Structured Field lists with one item per policy.
 */
export type HeaderStyle = 'draft-6' | 'draft-10';

export const HEADER_STYLES: readonly HeaderStyle[] = ['draft-6', 'draft-10'];

/** Header fields for a decision. `Retry-After` appears on denials that waiting can cure, and only then. */
// Stryker disable next-line StringLiteral: every style but 'draft-10' gets the draft-6 fields, so the default's spelling is inert
export function rateLimitHeaders(decision: Decision, style: HeaderStyle = 'draft-6'): Record<string, string> {
  // A fail-open or fail-closed decision knows nothing of the client's quota: advertising one would be a guess.
  const guessed = decision.degraded === 'fail-open' || decision.degraded === 'fail-closed';
  const headers: Record<string, string> = guessed
    ? {}
    : style === 'draft-10'
      ? draft10(decision)
      : draft6(decision);
  if (!decision.allowed && decision.retryAfterMs !== undefined) {
    headers['Retry-After'] = String(seconds(decision.retryAfterMs));
  }
  return headers;
}

function draft6(decision: Decision): Record<string, string> {
  const limit = String(decision.limit);
  const remaining = String(decision.remaining);
  const headers: Record<string, string> = {
    'RateLimit-Limit': limit,
    'RateLimit-Remaining': remaining,
    'X-RateLimit-Limit': limit,
    'X-RateLimit-Remaining': remaining,
  };
  if (decision.resetMs >= 0) {
    headers['RateLimit-Reset'] = String(Math.ceil(decision.resetMs / 1000));
    headers['X-RateLimit-Reset'] = new Date(decision.nowMs + decision.resetMs).toISOString();
  }
  return headers;
}

function draft10(decision: Decision): Record<string, string> {
  const policy: string[] = [];
  const state: string[] = [];
  for (const { policy: p, remaining, resetMs } of decision.policies) {
    const name = sfString(p.name);
    // A concurrency limit's quota is requests in flight, which the draft names as a quota unit.
    const unit = p.kind === 'concurrency' ? ';qu="concurrent-requests"' : '';
    policy.push(
      p.windowMs > 0
        ? `${name};q=${p.limit};w=${Math.ceil(p.windowMs / 1000)}`
        : `${name};q=${p.limit}${unit}`,
    );
    state.push(
      resetMs >= 0 ? `${name};r=${remaining};t=${Math.ceil(resetMs / 1000)}` : `${name};r=${remaining}`,
    );
  }
  return { 'RateLimit-Policy': policy.join(', '), RateLimit: state.join(', ') };
}

/** Whole seconds, rounded up so a client never comes back early, and never 0. */
function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** An RFC 9651 String (policy names are already restricted to characters that need no escaping). */
function sfString(value: string): string {
  return `"${value}"`;
}
