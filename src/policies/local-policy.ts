// A policy decided in this process alone (an adaptive concurrency limit): no store holds its state, and each
// admission holds a slot that its release measures.
import type { PolicyResult } from './policy.js';

/** How a request that held a slot ended, as its release tells it. */
export interface Ending {
  /** The response's status, when one was sent. */
  readonly status?: number;
  /** The request was dropped (timed out, or overloaded upstream); by default read from `status`. */
  readonly dropped?: boolean;
  /**
   * False: its round trip says nothing of the service (a WebSocket message, whose end is not known), so the slot is
   * freed without a measurement. Default true.
   */
  readonly measured?: boolean;
}

/** A slot held in a local policy; each part acts on the first call of either, once. */
export interface LocalSlot {
  /** The request is over: frees the slot, and measures the request (its time since admission, and how it ended). */
  release(ending?: Ending): void;
  /** The request never ran (another policy denied it, a wait gave up): frees the slot, measuring nothing. */
  cancel(): void;
}

/** A local policy's answer to one request: its result, and the slot an admission holds. */
export interface LocalAdmission {
  readonly result: PolicyResult;
  readonly slot: LocalSlot | undefined;
}

/** Where a waiter's turn ends: by a deadline on the wall clock, or an abort. */
export interface LocalWait {
  readonly partition: string | undefined;
  readonly maxWaitMs: number;
  readonly signal: AbortSignal | undefined;
}

/**
 * A policy whose state lives in this process: the limiter asks it before the store (and gives its slot back when
 * the store denies), never sends it to a store, and tells its figures beside the store's. Its limit may move.
 */
export interface LocalPolicy {
  readonly local: true;
  readonly kind: string;
  readonly name: string;
  /** Its limit now. */
  readonly limit: number;
  /** The status its denial answers with, rather than the adapter's (an adaptive limit: 503). */
  readonly denyStatus: number;
  /** How headers and decisions describe it at its current limit: one object per limit, so it may be cached. */
  facts(): PolicyFacts;
  /** Takes a slot for a request of `partition`, or denies it; never waits. */
  admit(partition: string | undefined): LocalAdmission;
  /** What `admit` would answer now, taking nothing. */
  peek(partition: string | undefined): PolicyResult;
  /** Resolves with an admission in arrival order; rejects once `maxWaitMs` passes or the signal aborts. */
  queue(wait: LocalWait): Promise<LocalAdmission>;
}

/** What a decision tells of the policy behind each result: what headers, waits and the admin endpoints read. */
export interface PolicyFacts {
  readonly kind: string;
  readonly name: string;
  readonly limit: number;
  readonly windowMs: number;
  readonly quotaUnit?: string;
  readonly retryHintMs?: number;
}

export function isLocalPolicy(policy: unknown): policy is LocalPolicy {
  return typeof policy === 'object' && policy !== null && (policy as { local?: unknown }).local === true;
}
