// A limiter's options, checked once at wire-up into the record that every operation of the limiter reads.

import type { Duration } from '../core/duration.js';
import { configError } from '../core/errors.js';
import { knownKeys, positiveInteger } from '../core/validate.js';
import { type Decision, soleDecision } from '../decision/decision.js';
import type { LocalPolicy } from '../policies/local-policy.js';
import { lockout } from '../policies/lockout.js';
import type { AnyPolicy, PolicyResult } from '../policies/policy.js';
import { defaultScope, validateScope } from '../stores/key.js';
import { MemoryStore } from '../stores/memory/memory-store.js';
import { sharedMemoryStore } from '../stores/memory/shared-memory-store.js';
import { isStore, type Store } from '../stores/store.js';
import { blockDuration, validatePolicies } from './checks.js';
import { warnOnSharedDefaultScope } from './shared-scope.js';
import { WaitLine } from './wait-line.js';

export interface LimiterOptions {
  /**
   * One policy, or several enforced together (a request must pass all; a denial spends from none). Local policies
   * (`adaptiveConcurrency()`) are decided in this process before the store is asked.
   */
  readonly policy: AnyPolicy | LocalPolicy | readonly (AnyPolicy | LocalPolicy)[];
  /** Default: one in-memory store shared by every limiter that brings none. */
  readonly store?: Store;
  /** Namespaces the buckets. Default: a hash of the policies' parameters. */
  readonly scope?: string;
  /** Units a request spends unless `consume` says otherwise. Default 1. */
  readonly cost?: number;
  /** What to answer when the store is unreachable: allow (true) or reject (false). Default: the store's setting. */
  readonly failOpen?: boolean;
  /**
   * A lockout: after a denial the identifier is denied outright for this long, whatever its policies say, shared
   * through the store. 0 checks blocks made by `block()` without starting any. Default: no lockout (and `block()`
   * unavailable), which costs nothing.
   */
  readonly blockMs?: Duration | 0;
}

/**
 * A limiter's options resolved, and what they imply, made once: no operation checks an option again. The record
 * is also the limiter's own token, which its admissions carry, so that a refund can tell they are its own.
 */
export interface ResolvedLimiter {
  readonly scope: string;
  readonly policies: readonly AnyPolicy[];
  /** What the store enforces: the policies, then the lockout when there is one. */
  readonly enforced: readonly AnyPolicy[];
  readonly store: Store;
  readonly defaultCost: number;
  readonly failOpen: boolean | undefined;
  /** The lockout's length; undefined without one (and then `block()` is unavailable). */
  readonly blockMs: number | undefined;
  /** A policy holds a slot per admission (a concurrency limit), so each consume takes a lease. */
  readonly leases: boolean;
  /** The store answers at once (`store.synchronous`). */
  readonly synchronous: boolean;
  /** The MemoryStore that decides the sole policy without a request: a policy alone, the common case. */
  readonly alone: MemoryStore | undefined;
  readonly sole: AnyPolicy;
  readonly answerAlone: (result: PolicyResult, nowMs: number) => Decision;
  /** This process's line per identifier, for the policies the store cannot book ahead. */
  readonly line: WaitLine | undefined;
}

export const LIMITER_OPTIONS = ['policy', 'store', 'scope', 'cost', 'failOpen', 'blockMs'];

export function resolveLimiterOptions(options: LimiterOptions): ResolvedLimiter {
  if (typeof options !== 'object' || options === null)
    throw configError('options', 'must be an object', options);
  knownKeys('createLimiter', options, LIMITER_OPTIONS);
  const policies = validatePolicies(options.policy);
  // Only an absent store means the shared default: `null` is a mistake worth hearing about.
  const store = options.store === undefined ? sharedMemoryStore() : options.store;
  if (!isStore(store))
    throw configError('store', 'must implement evaluate() and reset() (a MemoryStore or RedisStore)');
  const blockMs = options.blockMs === undefined ? undefined : blockDuration('blockMs', options.blockMs, 0);
  // The store sees the lockout as one more policy, evaluated with the others in the same atomic step.
  const enforced = blockMs === undefined ? policies : [...policies, lockout(blockMs)];
  store.checkPolicies?.(enforced);
  const scope = options.scope === undefined ? defaultScope(policies) : validateScope(options.scope);
  const defaultCost = positiveInteger('cost', options.cost ?? 1);
  const failOpen = options.failOpen;
  if (failOpen !== undefined && typeof failOpen !== 'boolean')
    throw configError('failOpen', 'must be a boolean', failOpen);
  checkCost(policies, defaultCost);
  const leases = takesLeases(policies);
  // A policy alone on a MemoryStore, the common case, is decided with no request, response or array made.
  const alone = store instanceof MemoryStore && enforced.length === 1 && !leases ? store : undefined;
  const sole = enforced[0] as AnyPolicy;
  // Last, so that only a limiter that is really created counts.
  if (options.scope === undefined) warnOnSharedDefaultScope(store, scope, policies);
  return {
    scope,
    policies,
    enforced,
    store,
    defaultCost,
    failOpen,
    blockMs,
    leases,
    synchronous: store.synchronous === true,
    alone,
    sole,
    answerAlone: (result, nowMs) => soleDecision(sole, result, nowMs),
    // Policies the store cannot book ahead are waited for in line, per identifier, in this process.
    line: enforced.every((p) => p.reservable) ? undefined : new WaitLine(),
  };
}

/** The default cost against the tightest limit; a leased policy counts requests, not units, so it is left out. */
function checkCost(policies: readonly AnyPolicy[], defaultCost: number): void {
  // A leased policy (a concurrency limit) counts requests, not units: a request of any cost holds one slot.
  const tightest = Math.min(...policies.filter((p) => !p.leased).map((p) => p.limit));
  // A limit of 0 is a deliberate "reject everything"; any other limit below the cost is a mistake.
  if (tightest > 0 && defaultCost > tightest) {
    throw configError('cost', `must not exceed the policy's limit (${tightest})`, defaultCost);
  }
}

/** Whether an admission holds a slot until it is released (a leased policy), named by a lease. */
function takesLeases(policies: readonly AnyPolicy[]): boolean {
  return policies.some((p) => p.leased);
}
