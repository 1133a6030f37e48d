// What a limiter offers: its operations, whichever policies and store it binds.

import type { Duration } from '../core/duration.js';
import type { Decision } from '../decision/decision.js';
import type { LocalPolicy } from '../policies/local-policy.js';
import type { AnyPolicy } from '../policies/policy.js';
import type { Store } from '../stores/store.js';
import type { RefundOptions } from './refund-spend.js';
import type { WaitOptions } from './wait.js';

export interface ConsumeOptions {
  readonly cost?: number;
  /** The partition of a local policy's limit this request is counted in (an adaptive limit's `partitions`). */
  readonly partition?: string | undefined;
}

export interface Limiter {
  readonly scope: string;
  /** The policies its store enforces. */
  readonly policies: readonly AnyPolicy[];
  /** The policies decided in this process alone, before the store is asked (an adaptive concurrency limit). */
  readonly local: readonly LocalPolicy[];
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
   * An adaptive limit is waited for first, in its own line across identifiers (first come, first served, a slot
   * handed to the next caller as it frees), then the store's policies within what is left of `maxWaitMs`.
   */
  wait(identifier: string, options?: WaitOptions): Promise<Decision>;
  /** Locks `identifier` out for `ms` (extending, never shortening, a block); needs the `blockMs` option. */
  block(identifier: string, ms: Duration): Promise<void>;
  /** Lifts `identifier`'s block, if any. */
  unblock(identifier: string): Promise<void>;
  /** Forgets `identifier`'s state in this limiter's scope, its block included. */
  reset(identifier: string): Promise<void>;
}
