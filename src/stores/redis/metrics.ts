// RedisStore's counters: one record, written by each part of the store that does what it counts.

export interface RedisStoreMetrics {
  decisions: number;
  degradedAllowed: number;
  degradedDenied: number;
  errors: number;
  timeouts: number;
  /** Times the script was missing on a server (restart, failover, SCRIPT FLUSH) and was sent in full. */
  scriptReloads: number;
  /** Decisions made by the memory fallback (also counted in degradedAllowed / degradedDenied). */
  fallbackDecisions: number;
  /** Times the circuit breaker opened. */
  breakerTrips: number;
  /** Denials answered from the local deny cache, without Redis. */
  localDenials: number;
}

export function zeroMetrics(): RedisStoreMetrics {
  return {
    decisions: 0,
    degradedAllowed: 0,
    degradedDenied: 0,
    errors: 0,
    timeouts: 0,
    scriptReloads: 0,
    fallbackDecisions: 0,
    breakerTrips: 0,
    localDenials: 0,
  };
}
