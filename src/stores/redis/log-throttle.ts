// Log throttling: a Redis outage fails thousands of calls a second, and one line per interval says as much as all.

/** The lines held back since the last one written: how many, and how many of them carried each label. */
export interface HeldBack {
  readonly count: number;
  readonly byLabel: ReadonlyMap<string, number>;
}

export class LogThrottle {
  readonly #intervalMs: number;
  readonly #now: () => number;
  #lastAt = Number.NEGATIVE_INFINITY;
  #count = 0;
  #byLabel = new Map<string, number>();

  constructor(intervalMs: number, now: () => number) {
    this.#intervalMs = intervalMs;
    this.#now = now;
  }

  /**
   * Whether a line may be written now. If so, what was held back since the last one written (counted from zero
   * again); if not, undefined, and this line is counted as held back under each of its `labels`: the line written
   * later says what the ones it stands for were about.
   */
  admit(labels: readonly string[]): HeldBack | undefined {
    const now = this.#now();
    if (now - this.#lastAt < this.#intervalMs) {
      this.#count++;
      for (const label of labels) this.#byLabel.set(label, (this.#byLabel.get(label) ?? 0) + 1);
      return undefined;
    }
    const held = { count: this.#count, byLabel: this.#byLabel };
    this.#lastAt = now;
    this.#count = 0;
    this.#byLabel = new Map();
    return held;
  }
}
