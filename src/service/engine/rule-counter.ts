// Counts one descriptor under its rule: a limiter per rule, cached, and the rule's fail mode when the store fails.
import { isTollgateError, storeError, TollgateError } from '../../core/errors.js';
import { type Decision, toDecision } from '../../decision/decision.js';
import { createLimiter, type Limiter } from '../../limiter/limiter.js';
import type { AnyPolicy } from '../../policies/policy.js';
import { degradedResponse, isFailMode, type Store } from '../../stores/store.js';
import type { LimitRule } from '../config/types.js';

/** A descriptor's decision, and whether the store failed and something else (a fail mode, memory) answered. */
interface Counted {
  readonly decision: Decision;
  readonly degraded: boolean;
}

/** Counts `hits` for `counterKey` under `rule`; 0 hits checks without counting. */
export type RuleCounter = (rule: LimitRule, counterKey: string, hits: number) => Promise<Counted>;

interface RuleLimiters {
  readonly main: Limiter;
  /** The rule's memory fail mode: the same policies and scope, counted in this process alone. */
  readonly fallback: Limiter | undefined;
}

/** What a fail-closed answer advises waiting, when this engine answers for a store that rejected: RedisStore's default. */
const FAIL_CLOSED_RETRY_MS = 1000;

/**
 * Limiters are cached, weakly, per policies object (a rule's own, or those an override shares with every request
 * that sets the same limit), then per scope and fail mode: what a limiter is made of. A reload brings new rules,
 * and with them new limiters, but a rule keeps its scope across reloads, so they count on in the same buckets.
 *
 * A rule's fail mode: `'open'` and `'closed'` are the limiter's `failOpen`, which a store that can fail applies
 * (RedisStore); absent, the store's own setting. `'memory'` counts in `fallbackStore` while the store answers
 * with a fail mode or rejects; without a `fallbackStore` it is the store's own setting, as if none were given.
 * When the store rejects, `'open'` and `'closed'` are answered here; without a fail mode the rejection stands.
 */
export function ruleCounter(store: Store, fallbackStore: Store | undefined): RuleCounter {
  const cache = new WeakMap<readonly AnyPolicy[], Map<string, RuleLimiters>>();
  const limitersOf = (rule: LimitRule): RuleLimiters => {
    let byScope = cache.get(rule.policies);
    if (byScope === undefined) {
      byScope = new Map();
      cache.set(rule.policies, byScope);
    }
    const id = `${rule.scope} ${rule.failMode ?? ''}`;
    let limiters = byScope.get(id);
    if (limiters === undefined) {
      limiters = makeLimiters(rule, store, fallbackStore);
      byScope.set(id, limiters);
    }
    return limiters;
  };
  return async (rule, counterKey, hits) => {
    const { main, fallback } = limitersOf(rule);
    let decision: Decision;
    try {
      decision = await ask(main, counterKey, hits);
    } catch (error) {
      if (!isStoreFailure(error)) throw error;
      if (fallback !== undefined) return { decision: await ask(fallback, counterKey, hits), degraded: true };
      return { decision: failModeAnswer(rule, error), degraded: true };
    }
    if (fallback !== undefined && isFailMode(decision.degraded))
      return { decision: await ask(fallback, counterKey, hits), degraded: true };
    return { decision, degraded: decision.degraded !== undefined };
  };
}

function makeLimiters(rule: LimitRule, store: Store, fallbackStore: Store | undefined): RuleLimiters {
  const { policies: policy, scope, failMode } = rule;
  const memory = failMode === 'memory' && fallbackStore !== undefined;
  // With a memory fallback, the store's fail mode only signals the failure: its answer is replaced.
  const failOpen = failMode === 'open' || memory ? true : failMode === 'closed' ? false : undefined;
  return {
    main: createLimiter(
      failOpen === undefined ? { policy, store, scope } : { policy, store, scope, failOpen },
    ),
    fallback: memory ? createLimiter({ policy, store: fallbackStore, scope }) : undefined,
  };
}

/**
 * A check (0 hits) asks whether one more hit would pass, and reports the figures before it. The reference adds 0
 * and calls a count over the limit OVER_LIMIT, which it only reaches by counting the hits it refused; Tollgate
 * never counts a refused hit, so its count stops at the limit, and the state the reference's check reports as over
 * is here the one where no further hit can pass. A check at cost 0 could never be refused. The one difference: a
 * count exactly at the limit, with nothing refused yet, the reference's check still calls OK.
 */
async function ask(limiter: Limiter, counterKey: string, hits: number): Promise<Decision> {
  if (hits > 0) return limiter.consume(counterKey, { cost: hits });
  const decision = await limiter.peek(counterKey, { cost: 1 });
  return decision.allowed ? beforeTheHit(decision) : decision;
}

/** An admitted peek of one unit, with that unit given back to each policy's figures: what a check reports. */
function beforeTheHit(decision: Decision): Decision {
  return {
    ...decision,
    remaining: decision.remaining + 1,
    policies: decision.policies.map((p) => ({ ...p, remaining: p.remaining + 1 })),
  };
}

/** A store that threw (not a refused argument or a configuration the store cannot hold) failed. */
function isStoreFailure(error: unknown): boolean {
  return !(isTollgateError(error, 'ERR_TOLLGATE_ARGUMENT') || isTollgateError(error, 'ERR_TOLLGATE_CONFIG'));
}

/** The rule's fail mode for a store that rejected: without one, a store error the caller answers UNAVAILABLE. */
function failModeAnswer(rule: LimitRule, error: unknown): Decision {
  const { failMode, policies } = rule;
  if (failMode !== 'open' && failMode !== 'closed')
    throw error instanceof TollgateError ? error : storeError('the store could not answer', error);
  return toDecision(
    policies,
    degradedResponse(policies, failMode === 'open', FAIL_CLOSED_RETRY_MS, Date.now()),
  );
}
