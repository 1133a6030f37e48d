// RedisStore's counters: one record, written by each part of the store that does what it counts.
import { storeError, TollgateError } from '../../core/errors.js';
import type { StoreErrorKind } from '../store.js';

export interface RedisStoreMetrics {
  decisions: number;
  degradedAllowed: number;
  degradedDenied: number;
  /** Failed calls of decisions (each call once, whatever number of decisions it carried). */
  errors: number;
  /** The same calls by how they failed (see `errorKind`). */
  errorsByKind: Record<StoreErrorKind, number>;
  timeouts: number;
  /** Times the engine was missing on a server (a restart, FUNCTION FLUSH or SCRIPT FLUSH) and was loaded again. */
  scriptReloads: number;
  /** Decisions made by the memory fallback (also counted in degradedAllowed / degradedDenied). */
  fallbackDecisions: number;
  /** Times the circuit breaker opened. */
  breakerTrips: number;
  /** Denials answered from the local deny cache, without Redis. */
  localDenials: number;
  /** Script calls of decisions sent to Redis, and the decisions they carried. */
  batches: number;
  batchedDecisions: number;
  /**
   * Decisions of calls to a cluster node sent again in a call of their slot: the node no longer served it, refused
   * the call (a demoted master, no functions) or had no connection.
   */
  resentBySlot: number;
}

export function zeroMetrics(): RedisStoreMetrics {
  return {
    decisions: 0,
    degradedAllowed: 0,
    degradedDenied: 0,
    errors: 0,
    errorsByKind: { timeout: 0, connection: 0, reply: 0, script: 0 },
    timeouts: 0,
    scriptReloads: 0,
    fallbackDecisions: 0,
    breakerTrips: 0,
    localDenials: 0,
    batches: 0,
    batchedDecisions: 0,
    resentBySlot: 0,
  };
}

/** Errors of the script's making, told apart by identity: their messages are whatever the script said. */
const scriptErrors = new WeakSet<Error>();

/** A decision the script answered with an error, or a reply that is not the script's. */
export function scriptError(message: string): TollgateError {
  const error = storeError(message);
  scriptErrors.add(error);
  return error;
}

/**
 * Redis's error replies start with their code in capitals (`OOM command not allowed...`, `READONLY You can't
 * write...`), as ioredis and node-redis pass them on and as the script returns those of the commands it ran; a
 * socket error carries a `syscall` instead, and a Lua error starts with the script's name.
 */
const REPLY = /^[A-Z]{2,}[A-Z_-]*(?: |$)/;

/** How a call failed (see `StoreErrorKind`): anything that is no timeout, no reply and no script's is a connection's. */
export function errorKind(error: unknown): StoreErrorKind {
  if (!(error instanceof Error)) return 'connection';
  if (error instanceof TollgateError && error.code === 'ERR_TOLLGATE_TIMEOUT') return 'timeout';
  if (REPLY.test(error.message) && !('syscall' in error)) return 'reply';
  if (scriptErrors.has(error)) return 'script';
  return 'connection';
}
