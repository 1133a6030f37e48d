// Open-loop traffic: Poisson arrivals at a rate that steps from phase to phase, as a share of the service's capacity.

import { mulberry32 } from '../../core/seeded-random.js';
import { exponential } from './seeded-random.js';
import { capacityPerSecond, drawServiceMs, type ServiceModel } from './service-model.js';

/** A stretch of steady traffic. */
export interface Phase {
  readonly label: string;
  readonly durationMs: number;
  /** The arrival rate as a percentage of the service's capacity at normal speed (200: twice what it can serve). */
  readonly loadPercent: number;
  /** Service times are multiplied by this for jobs starting in the phase (2: the service got twice as slow). Default 1. */
  readonly slowdown?: number;
}

/** Each arrival's time and work, in two arrays of the same length, in time order. */
export interface Arrivals {
  readonly atMs: Float64Array;
  /** Work at normal speed, drawn with the arrival so that every limit compared is given the same jobs. */
  readonly workMs: Float64Array;
}

/** When each phase starts, and when the last one ends (one more entry than phases). */
export function phaseStarts(phases: readonly Phase[]): number[] {
  const starts = [0];
  for (const phase of phases) starts.push((starts.at(-1) as number) + phase.durationMs);
  return starts;
}

/**
 * The arrivals of `phases`: open loop (clients do not slow down when refused or kept waiting, as real users and
 * upstream services do not), a Poisson process within each phase. At a phase's start the next gap is drawn anew at
 * the new rate, which the process's lack of memory makes exact.
 */
export function arrivals(phases: readonly Phase[], service: ServiceModel, seed: number): Arrivals {
  const gaps = mulberry32(seed);
  const work = mulberry32(seed ^ 0x5bd1e995);
  const capacity = capacityPerSecond(service);
  const atMs: number[] = [];
  const workMs: number[] = [];
  const starts = phaseStarts(phases);
  phases.forEach((phase, i) => {
    const end = starts[i + 1] as number;
    const meanGapMs = 1000 / ((capacity * phase.loadPercent) / 100);
    for (let at = (starts[i] as number) + exponential(gaps, meanGapMs); at < end; ) {
      atMs.push(at);
      workMs.push(drawServiceMs(service, work));
      at += exponential(gaps, meanGapMs);
    }
  });
  return { atMs: Float64Array.from(atMs), workMs: Float64Array.from(workMs) };
}
