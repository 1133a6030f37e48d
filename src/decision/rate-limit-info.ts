// The figures frameworks' rate limiters put on the request (`req.rateLimit`), computed once from a decision.

import { isFailMode } from '../stores/store.js';
import type { Decision } from './decision.js';

/**
 * What a route reads about its client's quota, shaped like express-rate-limit's `req.rateLimit` so code written
 * for it keeps working, with Tollgate's whole decision beside it.
 */
export interface RateLimitInfo {
  /** The binding policy's quota. */
  readonly limit: number;
  /**
   * Units of it in use, this request's included; undefined when a fail mode decided (the store could not be
   * reached, so nothing is known of the client's use).
   */
  readonly used: number | undefined;
  /** Units left; undefined when a fail mode decided, as for `used`. */
  readonly remaining: number | undefined;
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
    used: known ? decision.limit - decision.remaining : undefined,
    remaining: known ? decision.remaining : undefined,
    resetTime: known && decision.resetMs >= 0 ? new Date(decision.nowMs + decision.resetMs) : undefined,
    key,
    decision,
  };
}
