// Log throttling: a Redis outage fails thousands of calls a second, and one line per interval says as much as all.

export class LogThrottle {
  readonly #intervalMs: number;
  #lastAt = Number.NEGATIVE_INFINITY;
  #suppressed = 0;

  constructor(intervalMs: number) {
    this.#intervalMs = intervalMs;
  }

  /**
   * Whether a line may be written now. If so, how many were held back since the last one written (counted from
   * zero again); if not, undefined, and this line is counted as held back.
   */
  admit(): number | undefined {
    const now = Date.now();
    if (now - this.#lastAt < this.#intervalMs) {
      this.#suppressed++;
      return undefined;
    }
    const suppressed = this.#suppressed;
    this.#lastAt = now;
    this.#suppressed = 0;
    return suppressed;
  }
}
