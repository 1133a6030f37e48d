// A limiter binds policies, a store and a scope: its options resolved once at wire-up, its operations over them.

import { installDebugTrace } from '../core/debug-trace.js';
import type { Duration } from '../core/duration.js';
import type { Decision } from '../decision/decision.js';
import type { AnyPolicy } from '../policies/policy.js';
import type { Store } from '../stores/store.js';
import { consumeNow, decide, promised } from './decide.js';
import { block, refund, reset, unblock, wait } from './operations.js';
import type { RefundOptions } from './refund-spend.js';
import { type LimiterOptions, resolveLimiterOptions } from './resolve-options.js';
import type { WaitOptions } from './wait.js';

export type { RefundOptions } from './refund-spend.js';
export type { LimiterOptions } from './resolve-options.js';
export type { WaitOptions } from './wait.js';

// With NODE_DEBUG=tollgate, every request's steps are printed from the first limiter module loaded on.
installDebugTrace();

export interface ConsumeOptions {
  readonly cost?: number;
}

export interface Limiter {
  readonly scope: string;
  readonly policies: readonly AnyPolicy[];
  readonly store: Store;
  /** Spends `cost` units for `identifier` if every policy allows it. */
  consume(identifier: string, options?: ConsumeOptions): Promise<Decision>;
  /**
   * `consume`, answered synchronously, on a store that answers synchronously (`store.synchronous`: a MemoryStore):
   * the same decision, without a promise; what would reject `consume` throws. On any other store (Redis) it throws
   * `ERR_TOLLGATE_CONFIG`, spending nothing.
   */
  consumeSync(identifier: string, options?: ConsumeOptions): Decision;
  /** What `consume` would answer now, without spending. */
  peek(identifier: string, options?: ConsumeOptions): Promise<Decision>;
  /**
   * Gives back units spent earlier (a request that should not have counted), never beyond a full quota. Given
   * `spent: decision`, the admission this limiter returned for `identifier`, it gives back at most what that
   * admission spent, once, and only where those units still count (never into a window opened since); a copy, an
   * edited decision, another limiter's or another identifier's is refused (`ERR_TOLLGATE_ARGUMENT`). Without
   * `spent` it gives back `cost` units as told: a tool for trusted code, which could hand a client any quota.
   * Rejects (`ERR_TOLLGATE_STORE`) when the store could not apply it.
   */
  refund(identifier: string, options?: RefundOptions): Promise<void>;
  /**
   * Resolves with an admission once `identifier` may go: a token bucket books its place in line at once (first
   * come, first served). With a window or a concurrency limit, this process's callers for `identifier` line up and
   * only the first asks: a window again at its retry time, a concurrency limit on each release through this limiter
   * and every 100 ms. Rejects with `ERR_TOLLGATE_WAIT_TIMEOUT` as soon as it is clear the request cannot pass within
   * `maxWaitMs` (or once it has passed), and with the signal's reason when `signal` aborts. A wait starts no lockout.
   */
  wait(identifier: string, options?: WaitOptions): Promise<Decision>;
  /** Locks `identifier` out for `ms` (extending, never shortening, a block); needs the `blockMs` option. */
  block(identifier: string, ms: Duration): Promise<void>;
  /** Lifts `identifier`'s block, if any. */
  unblock(identifier: string): Promise<void>;
  /** Forgets `identifier`'s state in this limiter's scope, its block included. */
  reset(identifier: string): Promise<void>;
}

/**
 * A limiter: its policies (all must admit a request, which then spends from each), a store (by default the one
 * MemoryStore every limiter given none shares) and a scope, each option checked here, once.
 *
 * @example
 * // Bursts of 20, then 5 a second, per API key; a denial says how long to wait.
 * const limiter = createLimiter({ policy: tokenBucket({ capacity: 20, refillPerSecond: 5 }), scope: 'api' });
 * const decision = await limiter.consume(apiKey);
 * if (!decision.allowed) console.log(`retry in ${decision.retryAfterMs ?? '-'} ms`);
 */
export function createLimiter(options: LimiterOptions): Limiter {
  // Resolved once: each operation below is a named function of this record, and the record is the limiter's token.
  const limiter = resolveLimiterOptions(options);
  const { scope, policies, store, synchronous, defaultCost } = limiter;
  return {
    scope,
    policies,
    store,
    consume: synchronous
      ? (identifier, consumeOptions) =>
          promised(limiter, identifier, 'consume', consumeOptions?.cost ?? defaultCost)
      : (identifier, consumeOptions) =>
          decide(limiter, identifier, 'consume', consumeOptions?.cost ?? defaultCost),
    consumeSync: (identifier, consumeOptions) => consumeNow(limiter, identifier, consumeOptions),
    peek: synchronous
      ? (identifier, consumeOptions) =>
          promised(limiter, identifier, 'peek', consumeOptions?.cost ?? defaultCost)
      : (identifier, consumeOptions) =>
          decide(limiter, identifier, 'peek', consumeOptions?.cost ?? defaultCost),
    refund: (identifier, refundOptions) => refund(limiter, identifier, refundOptions),
    wait: (identifier, waitOptions) => wait(limiter, identifier, waitOptions),
    block: (identifier, ms) => block(limiter, identifier, ms),
    unblock: (identifier) => unblock(limiter, identifier),
    reset: (identifier) => reset(limiter, identifier),
  };
}
