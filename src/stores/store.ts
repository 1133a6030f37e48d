// The store contract: evaluate one client's buckets under a limiter's policies atomically, on the store's own clock.
import type { Operation } from '../policies/evaluate.js';
import type { AnyPolicy, PolicyResult } from '../policies/policy.js';

/**
 * Addressed by scope and identifier rather than by finished keys: the bucket key of policy `i` is
 * `bucketKey(scope, id, memberOf(policies, i))`, which a remote store builds, while an in-process one looks the two
 * parts up as they are (a key joined per request would be hashed afresh on every lookup).
 */
export interface StoreRequest extends Operation {
  readonly scope: string;
  /** The identifier as `encodeIdentifier` stores it. */
  readonly id: string;
  readonly policies: readonly AnyPolicy[];
  /** The limiter's fail mode, overriding the store's own, for stores that can be unreachable. */
  readonly failOpen?: boolean;
}

/**
 * - `'fail-open'` / `'fail-closed'`: the fail mode answered; the results carry no real state.
 * - `'fallback'`: a per-process store answered with a share of the limit; the results are real, but local.
 */
export type DegradedMode = 'fail-open' | 'fail-closed' | 'fallback';

/** A fail mode answered (not the store, nor its memory fallback): the answer knows nothing of the client's quota. */
export function isFailMode(degraded: DegradedMode | undefined): boolean {
  return degraded === 'fail-open' || degraded === 'fail-closed';
}

export interface StoreResponse {
  readonly allowed: boolean;
  /** Index-aligned with the request's policies. */
  readonly results: readonly PolicyResult[];
  /**
   * The store's clock at evaluation (the Redis server's, for RedisStore), in epoch ms; for a booked admission
   * (`delayMs`), the instant it holds from, which the results are relative to.
   */
  readonly nowMs: number;
  /** Set on an admission booked ahead (`maxDelayMs`): how long after the evaluation it holds. */
  readonly delayMs?: number;
  /** Set when the store could not reach its data: how the answer was made instead. */
  readonly degraded?: DegradedMode;
}

/**
 * A store evaluates all of a request's policies as one atomic step (a consume, peek, refund or block, as
 * `evaluatePolicies` does it): concurrent requests for the same keys never interleave, and when one policy denies,
 * nothing is spent from the others.
 * A synchronous answer is allowed so that an in-process store costs no promise per request.
 */
export interface Store {
  evaluate(request: StoreRequest): StoreResponse | Promise<StoreResponse>;
  /**
   * True when `evaluate` never answers with a promise (an in-process store such as MemoryStore): a limiter on it
   * offers `consumeSync`, and its `consume` awaits nothing.
   */
  readonly synchronous?: boolean;
  /**
   * Called once by `createLimiter`, at wire-up: throws a configuration error naming the store's option when the
   * store's own bounds (a retention cap, a size bound) cannot hold these policies exactly.
   */
  checkPolicies?(policies: readonly AnyPolicy[]): void;
  /**
   * How long at most the store keeps a bucket after its last write, and the option that says so; absent when it
   * keeps every bucket until it is at rest. A limiter's `block()` longer than this is refused: it would end early.
   */
  readonly retentionCap?: RetentionCap;
  /** Forgets the given bucket keys (as `bucketKey` builds them and `keys()` lists them). */
  reset(keys: readonly string[]): void | Promise<void>;
  /** Every key the store holds (without any prefix), for admin tooling; across all nodes of a cluster. */
  keys?(): AsyncIterable<string>;
  /** Releases timers and connections. */
  close?(): void | Promise<void>;
  /** What the store knows of its own health, for metrics: read when they are collected, never per decision. */
  stats?(): StoreStats;
}

/** A store's cap on how long it keeps a bucket, and the option that sets it. */
export interface RetentionCap {
  readonly option: string;
  readonly ms: number;
}

/**
 * How a failed call to a store's backend failed. RedisStore's kinds: `timeout` (no answer within the budget),
 * `connection` (no answer at all: not connected, connection closed, refused or reset), `reply` (Redis refused a
 * command with an error, the call's or one the script ran: writes refused by OOM, READONLY or MISCONF, a cluster
 * that is down, a key of another type) and `script` (the script itself failed, or its reply could not be read).
 */
export type StoreErrorKind = 'timeout' | 'connection' | 'reply' | 'script';

/**
 * What a bucket evicted to stay within a size bound held: `at-rest` nothing (a full bucket, an ended window, no lease:
 * no loss), `live` quota still owed (handed back early: the client gains at most what the time to rest would have
 * given it), `held` a promise (a concurrency lease, a lockout's block, a wait booked ahead: broken).
 */
export type EvictionState = 'at-rest' | 'live' | 'held';

/** One circuit breaker: the node it guards ('' when the store has one node, or before a cluster's are known). */
export interface StoreBreaker {
  readonly node: string;
  readonly open: boolean;
}

/**
 * Running totals since the store was created, and its breakers' state now. A store reports the figures it keeps
 * and leaves out the others; `tollgate/metrics` and `tollgate/otel` export the figures their stores report.
 */
export interface StoreStats {
  /** Calls to the backend that did not answer within their time budget (decisions, probes, resets, connecting). */
  readonly timeouts?: number;
  /** Failed calls of decisions, by kind (each failed call once, whatever number of decisions it carried). */
  readonly errors?: Readonly<Record<StoreErrorKind, number>>;
  readonly breakers?: readonly StoreBreaker[];
  /** Times a circuit breaker opened. */
  readonly breakerTrips?: number;
  /** Times a server lacked the store's engine (a fresh server, a restart, FUNCTION FLUSH) and it was loaded again. */
  readonly scriptReloads?: number;
  /** Calls of decisions sent, and the decisions they carried: their ratio is the mean batch size. */
  readonly batches?: number;
  readonly batchedDecisions?: number;
  /** Denials answered by a local cache, without the backend. */
  readonly denyCacheHits?: number;
  /** Buckets dropped to stay within a size bound, by what they held. */
  readonly evictions?: Readonly<Record<EvictionState, number>>;
}

export function isStore(value: unknown): value is Store {
  const candidate = value as Partial<Store> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.evaluate === 'function' &&
    typeof candidate.reset === 'function'
  );
}

/**
 * The answer of a store that could not reach its data: allowed or not by the fail mode, with a retry hint on
 * denial. Nothing is known of the client's real state, so remaining is reported as 0.
 */
export function degradedResponse(
  policies: readonly AnyPolicy[],
  failOpen: boolean,
  retryAfterMs: number,
  nowMs: number,
): StoreResponse {
  const result = { allowed: failOpen, remaining: 0, resetMs: 0, retryAfterMs: failOpen ? 0 : retryAfterMs };
  return {
    allowed: failOpen,
    results: policies.map(() => result),
    nowMs,
    degraded: failOpen ? 'fail-open' : 'fail-closed',
  };
}
