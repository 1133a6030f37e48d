// A circuit breaker: after repeated failures, stop waiting on Redis at all and probe it in the background instead.

export interface CircuitBreakerOptions {
  /** Consecutive failures that open the breaker. */
  readonly threshold: number;
  /** Time between background probes while open. */
  readonly probeIntervalMs: number;
  /** Resolves when the dependency answers again. */
  readonly probe: () => Promise<unknown>;
  readonly onOpen: () => void;
  readonly onClose: () => void;
}

/**
 * Closed: requests go to Redis and failures are counted. Open: requests are answered without Redis at once
 * (microseconds, not a timeout each), while one probe per interval checks Redis; the first success closes it.
 * Probing in the background, rather than letting a live request through as a half-open trial, means no client
 * request ever pays for the check.
 */
export class CircuitBreaker {
  #failures = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  #probing = false;
  readonly #options: CircuitBreakerOptions;

  constructor(options: CircuitBreakerOptions) {
    this.#options = options;
  }

  get isOpen(): boolean {
    return this.#timer !== undefined;
  }

  success(): void {
    this.#failures = 0;
  }

  failure(): void {
    this.#failures++;
    if (this.#failures < this.#options.threshold || this.isOpen) return;
    // A callback that throws (a user's logger, say) must not crash the process: the breaker has closed by then.
    this.#timer = setInterval(() => this.#probe().catch(() => {}), this.#options.probeIntervalMs);
    this.#timer.unref();
    this.#options.onOpen();
  }

  /** Stops probing for good (the store is closing). */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async #probe(): Promise<void> {
    if (this.#probing) return;
    this.#probing = true;
    try {
      await this.#options.probe();
    } catch {
      return; // Still down: the next interval probes again.
    } finally {
      this.#probing = false;
    }
    if (!this.isOpen) return;
    this.stop();
    this.#failures = 0;
    this.#options.onClose();
  }
}
