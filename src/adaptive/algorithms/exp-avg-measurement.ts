// An exponential moving average that starts as a plain average of its first samples, as Netflix's ExpAvgMeasurement.

/**
 * The first `warmupWindow` samples are averaged plainly, so that the first one does not weigh for ever; after them
 * each sample moves the value by `2 / (window + 1)` of the way, the usual weight of an N-sample exponential average.
 */
export class ExpAvgMeasurement {
  #value = 0;
  #sum = 0;
  #count = 0;
  readonly #factor: number;
  readonly #warmupWindow: number;

  constructor(window: number, warmupWindow: number) {
    this.#factor = 2 / (window + 1);
    this.#warmupWindow = warmupWindow;
  }

  /** The average so far: 0 before any sample. */
  get value(): number {
    return this.#value;
  }

  /** Takes one sample; returns the average after it. */
  add(sample: number): number {
    if (this.#count < this.#warmupWindow) {
      this.#count++;
      this.#sum += sample;
      this.#value = this.#sum / this.#count;
    } else {
      this.#value = this.#value * (1 - this.#factor) + sample * this.#factor;
    }
    return this.#value;
  }

  /**
   * Scales the value. The sum of the warm-up is left alone, as in the reference: during warm-up the next sample
   * recomputes the plain average and undoes the scaling.
   */
  scale(factor: number): void {
    this.#value *= factor;
  }
}
