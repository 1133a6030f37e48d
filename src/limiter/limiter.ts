// A limiter binds policies, a store and a scope; its options are validated once, here, at wire-up.

import type { Duration } from '../core/duration.js';
import { configError, TollgateError } from '../core/errors.js';
import { knownKeys, positiveInteger } from '../core/validate.js';
import { type Decision, soleDecision, toDecision } from '../decision/decision.js';
import type { Operation, StoreAction } from '../policies/evaluate.js';
import { lockout } from '../policies/lockout.js';
import type { AnyPolicy, PolicyResult } from '../policies/policy.js';
import {
  bucketKey,
  bucketKeys,
  defaultScope,
  encodeIdentifier,
  memberOf,
  validateScope,
} from '../stores/key.js';
import { MemoryStore } from '../stores/memory/memory-store.js';
import { sharedMemoryStore } from '../stores/memory/shared-memory-store.js';
import { isFailMode, isStore, type Store, type StoreRequest, type StoreResponse } from '../stores/store.js';
import { blockDuration, requestedBlock, units, validatePolicies } from './checks.js';
import { leaseName, once } from './lease.js';
import { type RefundChange, type RefundOptions, recordSpend, refundOf } from './refund-spend.js';
import { warnOnSharedDefaultScope } from './shared-scope.js';
import { type WaitOptions, waitFor } from './wait.js';
import { WaitLine } from './wait-line.js';

export type { RefundOptions } from './refund-spend.js';
export type { WaitOptions } from './wait.js';

export interface LimiterOptions {
  /** One policy, or several enforced together (a request must pass all; a denial spends from none). */
  readonly policy: AnyPolicy | readonly AnyPolicy[];
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

export interface ConsumeOptions {
  readonly cost?: number;
}

/** What a wait, a refund or a block adds to a store request; a plain consume or peek adds nothing. */
type Extra = Pick<Operation, 'maxDelayMs' | 'waiting' | 'spentAtMs' | 'spentResetMs'>;

/** What a refund, a release or a block asks of the store. */
interface Change {
  readonly units: number;
  readonly lease?: string;
  readonly spentAtMs?: number;
  readonly spentResetMs?: readonly number[];
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

const OPTIONS = ['policy', 'store', 'scope', 'cost', 'failOpen', 'blockMs'];

export function createLimiter(options: LimiterOptions): Limiter {
  if (typeof options !== 'object' || options === null)
    throw configError('options', 'must be an object', options);
  knownKeys('createLimiter', options, OPTIONS);
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
  // A concurrency policy counts requests, not units: a request of any cost holds one slot.
  const tightest = Math.min(...policies.filter((p) => p.kind !== 'concurrency').map((p) => p.limit));
  // A limit of 0 is a deliberate "reject everything"; any other limit below the cost is a mistake.
  if (tightest > 0 && defaultCost > tightest) {
    throw configError('cost', `must not exceed the policy's limit (${tightest})`, defaultCost);
  }
  const leases = policies.some((p) => p.kind === 'concurrency');
  const synchronous = store.synchronous === true;
  // A policy alone on a MemoryStore, the common case, is decided with no request, response or array made.
  const alone = store instanceof MemoryStore && enforced.length === 1 && !leases ? store : undefined;
  const sole = enforced[0] as AnyPolicy;
  const answerAlone = (result: PolicyResult, nowMs: number) => soleDecision(sole, result, nowMs);
  // Last, so that only a limiter that is really created counts.
  if (options.scope === undefined) warnOnSharedDefaultScope(store, scope, policies);

  // Policies the store cannot book ahead are waited for in line, per identifier, in this process.
  const line = enforced.every((p) => p.reservable) ? undefined : new WaitLine();
  const ask = (identifier: string, action: StoreAction, cost: number, lease: string, extra?: Extra) => {
    const id = encodeIdentifier(identifier);
    // Every field set, in one order, so that every consume has one shape; only a wait, a refund or a block adds more.
    const request: StoreRequest =
      failOpen === undefined
        ? { scope, id, policies: enforced, action, cost, lease, maxDelayMs: 0 }
        : { scope, id, policies: enforced, action, cost, lease, maxDelayMs: 0, failOpen };
    // Stryker disable next-line ConditionalExpression: spreading nothing is the same request; a consume skips the copy
    return store.evaluate(extra === undefined ? request : { ...request, ...extra });
  };
  /** A refund or a block must really happen: a fail mode's answer means it did not. */
  const change = async (
    identifier: string,
    action: StoreAction,
    { units: requested, lease = '', ...spent }: Change,
  ) => {
    const { degraded } = await ask(identifier, action, units(requested), lease, spent);
    if (isFailMode(degraded))
      throw new TollgateError(
        'ERR_TOLLGATE_STORE',
        `the store is unreachable; the ${action} was not applied`,
      );
  };
  /** A refund checked against the spend it names; a refund the store did not apply may be asked for again. */
  const refund = async (identifier: string, refundOptions: RefundOptions | undefined) => {
    const { undo, ...asked }: RefundChange = refundOf(limiter, identifier, refundOptions, defaultCost);
    try {
      await change(identifier, 'refund', asked);
    } catch (error) {
      undo?.();
      throw error;
    }
  };
  const release = async (identifier: string, lease: string) => {
    await change(identifier, 'refund', { units: 0, lease });
    // Stryker disable next-line OptionalChaining: a limiter with slots to release cannot book them ahead, so has a line
    line?.released(identifier);
  };
  const leaseFor = (action: StoreAction, cost: number) =>
    leases && action === 'consume' && cost > 0 ? leaseName() : '';
  const settle = (
    identifier: string,
    action: StoreAction,
    cost: number,
    lease: string,
    response: StoreResponse,
  ): Decision => {
    const decision = toDecision(enforced, response);
    if (!decision.allowed || action !== 'consume') return decision;
    // A fail-open admission took no slot anywhere: there is nothing to release, and nothing spent to refund.
    const failed = isFailMode(decision.degraded);
    if (lease !== '' && !failed)
      (decision as { release?: () => Promise<void> }).release = once(() => release(identifier, lease));
    return recordSpend(decision, limiter, identifier, failed ? 0 : cost);
  };
  const decide = async (
    identifier: string,
    action: StoreAction,
    requested: number,
    waiting?: Extra,
  ): Promise<Decision> => {
    const cost = units(requested);
    const lease = leaseFor(action, cost);
    const answer = ask(identifier, action, cost, lease, waiting);
    // An in-process store answers synchronously: awaiting it anyway would cost a turn of the microtask queue.
    return settle(identifier, action, cost, lease, isPromise(answer) ? await answer : answer);
  };
  /** A consume or a peek on a synchronous store, without a promise. */
  const decideNow = (identifier: string, action: 'consume' | 'peek', requested: number): Decision => {
    const cost = units(requested);
    if (alone !== undefined) {
      const decision = alone.decideAlone(
        scope,
        encodeIdentifier(identifier),
        sole,
        action,
        cost,
        answerAlone,
      );
      return decision.allowed && action === 'consume'
        ? recordSpend(decision, limiter, identifier, cost)
        : decision;
    }
    const lease = leaseFor(action, cost);
    const answer = ask(identifier, action, cost, lease);
    if (isPromise(answer))
      throw new TollgateError(
        'ERR_TOLLGATE_STORE',
        'the store declares `synchronous` but answered with a promise',
      );
    return settle(identifier, action, cost, lease, answer);
  };
  /** A synchronous decision as `consume` and `peek` return it: a promise, and a throw as its rejection. */
  const promised = (identifier: string, action: 'consume' | 'peek', cost: number): Promise<Decision> => {
    try {
      return Promise.resolve(decideNow(identifier, action, cost));
    } catch (error) {
      return Promise.reject(error);
    }
  };
  const limiter: Limiter = {
    scope,
    policies,
    store,
    consume: synchronous
      ? (identifier, consumeOptions) => promised(identifier, 'consume', consumeOptions?.cost ?? defaultCost)
      : (identifier, consumeOptions) => decide(identifier, 'consume', consumeOptions?.cost ?? defaultCost),
    consumeSync: (identifier, consumeOptions) => {
      if (!synchronous)
        throw configError(
          'store',
          'must answer synchronously for consumeSync() (a MemoryStore, or a store whose `synchronous` is true); use consume()',
        );
      return decideNow(identifier, 'consume', consumeOptions?.cost ?? defaultCost);
    },
    peek: synchronous
      ? (identifier, consumeOptions) => promised(identifier, 'peek', consumeOptions?.cost ?? defaultCost)
      : (identifier, consumeOptions) => decide(identifier, 'peek', consumeOptions?.cost ?? defaultCost),
    refund,
    wait: async (identifier, waitOptions) => {
      const cost = waitOptions?.cost ?? defaultCost;
      return waitFor(
        {
          // The engine books only policies that can be booked; the others answer as a consume that starts no lockout.
          attempt: (maxDelayMs) => decide(identifier, 'consume', cost, { maxDelayMs, waiting: true }),
          giveBack: async (decision) => {
            await Promise.all([
              refund(identifier, { spent: decision }),
              // Stryker disable next-line OptionalChaining: without a slot the refund is already sent when the call throws, and wait swallows it
              decision.release?.(),
            ]);
          },
          line,
          identifier,
        },
        waitOptions,
      );
    },
    block: async (identifier, ms) => {
      if (blockMs === undefined)
        throw configError('blockMs', 'must be set for block() (0 checks blocks without starting any)');
      await change(identifier, 'block', { units: requestedBlock(ms, store.retentionCap) });
    },
    unblock: async (identifier) => {
      if (blockMs === undefined)
        throw configError('blockMs', 'must be set for unblock() (0 checks blocks without starting any)');
      const key = bucketKey(scope, encodeIdentifier(identifier), memberOf(enforced, enforced.length - 1));
      await store.reset([key]);
    },
    reset: async (identifier) => {
      await store.reset(bucketKeys(scope, identifier, enforced));
    },
  };
  return limiter;
}

function isPromise(response: StoreResponse | Promise<StoreResponse>): response is Promise<StoreResponse> {
  return typeof (response as Partial<Promise<StoreResponse>>).then === 'function';
}
