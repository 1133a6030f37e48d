// A limiter binds policies, a store and a scope: its options resolved once at wire-up, its operations over them.

import { installDebugTrace } from '../core/debug-trace.js';
import { isLocalPolicy, type LocalPolicy } from '../policies/local-policy.js';
import type { AnyPolicy } from '../policies/policy.js';
import { consumeNow, decide, promised } from './decide.js';
import type { Limiter } from './limiter-interface.js';
import { block, refund, reset, unblock, wait } from './operations.js';
import { type LimiterOptions, resolveLimiterOptions } from './resolve-options.js';
import { localPolicies, withLocalPolicies } from './with-local.js';

export type { ConsumeOptions, Limiter } from './limiter-interface.js';
export type { RefundOptions } from './refund-spend.js';
export type { LimiterOptions } from './resolve-options.js';
export type { WaitOptions } from './wait.js';

// With NODE_DEBUG=tollgate, every request's steps are printed from the first limiter module loaded on.
installDebugTrace();

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
  const local = localPolicies(options);
  if (local === undefined) return storeLimiter(options);
  const allLocal = local.length === (Array.isArray(options.policy) ? options.policy.length : 1);
  return withLocalPolicies(
    local,
    allLocal ? undefined : storeLimiter({ ...options, policy: stored(options.policy) }),
    options,
  );
}

/** The policies a store enforces: all but the local ones. */
function stored(policy: LimiterOptions['policy']): AnyPolicy[] {
  return (policy as readonly (AnyPolicy | LocalPolicy)[]).filter((p): p is AnyPolicy => !isLocalPolicy(p));
}

/** A limiter of policies its store enforces. */
function storeLimiter(options: LimiterOptions): Limiter {
  // Resolved once: each operation below is a named function of this record, and the record is the limiter's token.
  const limiter = resolveLimiterOptions(options);
  const { scope, policies, store, synchronous, defaultCost } = limiter;
  return {
    scope,
    policies,
    local: [],
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
