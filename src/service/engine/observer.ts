// What the service tells its metrics: each descriptor's outcome, each request's time, and what failed.

/** One descriptor of one request, as the reference's per-descriptor statistics count it. */
export interface DescriptorOutcome {
  /** `LimitMatch.statsKey`. */
  readonly statsKey: string;
  /** The hits the descriptor asked for. */
  readonly hits: number;
  /** Allowed, allowed with under a fifth of the limit left, or over the limit (shadow mode: over, but let through). */
  readonly level: 'within' | 'near' | 'over';
  readonly shadow: boolean;
  /**
   * The stats key holds request values (`detailed_metric`, `value_to_metric`, a request's own limit): it differs
   * from the configured limit's key, and a client can make new ones at will.
   */
  readonly fromRequest: boolean;
}

export interface ServiceObserver {
  descriptor(outcome: DescriptorOutcome): void;
  /** A whole request answered (or refused), by protocol, in ms. */
  request(
    protocol: 'grpc' | 'http' | 'json',
    ms: number,
    result: 'ok' | 'over_limit' | 'invalid' | 'error',
  ): void;
  /** The store failed and a fail mode answered. */
  storeError(): void;
}
