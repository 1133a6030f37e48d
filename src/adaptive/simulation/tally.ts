// What a run counts as it goes: per phase, its requests' fates and latencies; over time, a sampled series.

/** The requests that arrived in one phase, by what became of them. */
export interface PhaseTally {
  arrivals: number;
  /** Refused by the limit: no retry. */
  rejected: number;
  /** Admitted, but not answered within the timeout. */
  timedOut: number;
  /** Of those answered within the timeout: the goodput. */
  readonly latenciesMs: number[];
}

export function tallies(phases: number): PhaseTally[] {
  return Array.from({ length: phases }, () => ({ arrivals: 0, rejected: 0, timedOut: 0, latenciesMs: [] }));
}

/**
 * The run over time, a column per figure: at each sample, the limit, the requests in flight under it, those of them
 * waiting for a worker, and the p50 and p99 of the latencies of requests answered since the sample before (null if
 * none were).
 */
export interface Series {
  readonly timeMs: number[];
  readonly limit: number[];
  readonly inFlight: number[];
  readonly queued: number[];
  readonly p50Ms: (number | null)[];
  readonly p99Ms: (number | null)[];
}

export class SeriesRecorder {
  readonly series: Series = { timeMs: [], limit: [], inFlight: [], queued: [], p50Ms: [], p99Ms: [] };
  #latencies: number[] = [];

  complete(latencyMs: number): void {
    this.#latencies.push(latencyMs);
  }

  sample(timeMs: number, limit: number, inFlight: number, queued: number): void {
    const { series } = this;
    series.timeMs.push(timeMs);
    series.limit.push(limit);
    series.inFlight.push(inFlight);
    series.queued.push(queued);
    const sorted = this.#latencies.sort((a, b) => a - b);
    series.p50Ms.push(percentile(sorted, 0.5));
    series.p99Ms.push(percentile(sorted, 0.99));
    this.#latencies = [];
  }
}

/** The nearest-rank percentile of ascending `sorted` (q in (0, 1]), rounded to 0.1 ms; null if it is empty. */
export function percentile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  const value = sorted[Math.ceil(q * sorted.length) - 1] as number;
  return Math.round(value * 10) / 10;
}
