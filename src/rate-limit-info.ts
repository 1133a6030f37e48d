// The figures frameworks' rate limiters put on the request (`req.rateLimit`), computed once from a decision.
import type { Decision } from './decision.js';
import { isFailMode } from './stores/store.js';

/**
 * What a route reads about its client's quota, shaped like express-rate-limit's `req.rateLimit` so code written
 * for it keeps working, with Tollgate's whole decision beside it.
 */
export interface RateLimitInfo {
  /** The binding policy's quota. */
  readonly limit: number;
  /** Units of it in use, this request's included. */
  readonly used: number;
  /** Units left. */
  readonly remaining: number;
  /** When the binding policy is back at rest; undefined when it never will or the store could not say. */
  readonly resetTime: Date | undefined;
  /** The identity the request was counted under. */
  readonly key: string;
  readonly decision: Decision;
}

export function rateLimitInfo(decision: Decision, key: string): RateLimitInfo {
  const known = !isFailMode(decision.degraded);
  return {
    limit: decision.limit,
    used: decision.limit - decision.remaining,
    remaining: decision.remaining,
    resetTime: known && decision.resetMs >= 0 ? new Date(decision.nowMs + decision.resetMs) : undefined,
    key,
    decision,
  };
}
