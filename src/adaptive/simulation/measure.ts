// A run's figures per phase: goodput, latency percentiles, refusals, and how long the limit took to settle.
import type { RawRun, Scenario } from './run-simulation.js';
import { capacityPerSecond } from './service-model.js';
import { percentile, type Series } from './tally.js';
import { phaseStarts } from './traffic.js';

/**
 * One phase's figures. Answers and timeouts count in the phase they happen in, arrivals and refusals in the phase
 * they arrive in; the run ends with the last phase, and what is in flight then counts nowhere.
 */
export interface PhaseResult {
  readonly label: string;
  readonly arrivals: number;
  /** Requests answered within the timeout per second: the goodput. */
  readonly goodputPerSecond: number;
  /** The goodput as a share of the service's capacity at normal speed (1: all of it). */
  readonly goodputShare: number;
  /** Latency percentiles of the requests answered within the timeout (null if none were). */
  readonly p50Ms: number | null;
  readonly p99Ms: number | null;
  /** Refused by the limit, as a share of the phase's arrivals. */
  readonly rejectedShare: number;
  /** Given up on at the timeout, as a share of the phase's arrivals. */
  readonly timedOutShare: number;
  /** The median limit over the last quarter of the phase: where it settled, if it did. */
  readonly settledLimit: number;
  /**
   * From the phase's start, the time after which the limit (its median over the trailing second, as the limit of a
   * single sample jitters) stays within ±10% of `settledLimit` (at least ±1, a limit being whole) to the phase's
   * end; null if that holds only over the last quarter of the phase: it did not settle.
   */
  readonly convergenceMs: number | null;
}

/** The band around a target limit that counts as reaching it: ±10%, and at least ±1 since a limit is whole. */
function withinBand(limit: number, target: number): boolean {
  return Math.abs(limit - target) <= Math.max(1, target * 0.1);
}

/** The figures of `run` phase by phase. */
export function measure(scenario: Scenario, run: RawRun): PhaseResult[] {
  const starts = phaseStarts(scenario.phases);
  const capacity = capacityPerSecond(scenario.service);
  const smoothed = smoothedLimits(run.series);
  return scenario.phases.map((phase, i) => {
    const tally = run.tallies[i];
    if (tally === undefined) throw new Error(`no tally for phase ${i}`);
    const from = starts[i] as number;
    const to = starts[i + 1] as number;
    const goodput = (tally.latenciesMs.length * 1000) / phase.durationMs;
    const sorted = tally.latenciesMs.toSorted((a, b) => a - b);
    const settledLimit = median(
      samplesIn(run.series.timeMs, run.series.limit, from + ((to - from) * 3) / 4, to),
    );
    const settledAfter = stableAfter(run.series.timeMs, smoothed, from, to, settledLimit);
    return {
      label: phase.label,
      arrivals: tally.arrivals,
      goodputPerSecond: goodput,
      goodputShare: goodput / capacity,
      p50Ms: percentile(sorted, 0.5),
      p99Ms: percentile(sorted, 0.99),
      rejectedShare: tally.arrivals === 0 ? 0 : tally.rejected / tally.arrivals,
      timedOutShare: tally.arrivals === 0 ? 0 : tally.timedOut / tally.arrivals,
      settledLimit,
      convergenceMs: settledAfter !== null && settledAfter <= (to - from) * 0.75 ? settledAfter : null,
    };
  });
}

/**
 * How long after the start of phase `phase` the limit (its trailing-second median) first comes within ±10% of
 * where it settled in the first phase; null if it does not within the phase. For a scenario that returns to its
 * first phase's conditions: the time the limit takes to recover.
 */
export function recoveryMs(scenario: Scenario, run: RawRun, phase: number): number | null {
  const starts = phaseStarts(scenario.phases);
  const { timeMs, limit } = run.series;
  const firstTo = starts[1] as number;
  const baseline = median(samplesIn(timeMs, limit, firstTo * 0.75, firstTo));
  const from = starts[phase] as number;
  const to = starts[phase + 1] as number;
  const smoothed = smoothedLimits(run.series);
  const at = timeMs.findIndex((t, i) => t > from && t <= to && withinBand(smoothed[i] as number, baseline));
  return at === -1 ? null : (timeMs[at] as number) - from;
}

/** Each sample's limit as the median of those of the trailing second (itself included). */
function smoothedLimits(series: Series): number[] {
  const { timeMs, limit } = series;
  return timeMs.map((at, i) => {
    const window: number[] = [];
    for (let j = i; j >= 0 && (timeMs[j] as number) > at - 1000; j--) window.push(limit[j] as number);
    return median(window);
  });
}

/** The values of `values` at the samples taken in (fromMs, toMs]: each shows what the phase left at that moment. */
function samplesIn(
  timeMs: readonly number[],
  values: readonly number[],
  fromMs: number,
  toMs: number,
): number[] {
  return values.filter((_, i) => (timeMs[i] as number) > fromMs && (timeMs[i] as number) <= toMs);
}

/** The lower median (0 of none). */
function median(values: readonly number[]): number {
  const sorted = values.toSorted((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? 0;
}

/** How long after `fromMs` the limits enter the band of `target` for good, up to `toMs`; null if out of it then. */
function stableAfter(
  timeMs: readonly number[],
  limits: readonly number[],
  fromMs: number,
  toMs: number,
  target: number,
): number | null {
  let enteredAt: number | null = 0;
  timeMs.forEach((at, i) => {
    if (at <= fromMs || at > toMs) return;
    if (!withinBand(limits[i] as number, target)) enteredAt = null;
    else if (enteredAt === null) enteredAt = at - fromMs;
  });
  return enteredAt;
}
