// The named scenarios and the limits they compare: the default, the adaptive algorithms at their defaults, two fixed limits.
import { aimd } from '../algorithms/aimd.js';
import { gradient } from '../algorithms/gradient.js';
import { gradient2 } from '../algorithms/gradient2.js';
import { vegas } from '../algorithms/vegas.js';
import { fixedLimit } from './fixed-limit.js';
import type { Contender, Scenario } from './run-simulation.js';
import { DEFAULT_SERVICE, type ServiceModel } from './service-model.js';

const SEED = 20_240_601;

/**
 * Load steps up to twice the capacity and back down to it, 20 s each: long enough for every algorithm to settle
 * at each step (Envoy's gradient measures its minimum round trip every 60 s or so, so it may not within one).
 */
export const OVERLOAD_STEP: Scenario = {
  name: 'overload-step',
  title: 'Load 50% → 90% → 200% → 100% of capacity, 20 s each',
  service: DEFAULT_SERVICE,
  phases: [
    { label: '50%', durationMs: 20_000, loadPercent: 50 },
    { label: '90%', durationMs: 20_000, loadPercent: 90 },
    { label: '200%', durationMs: 20_000, loadPercent: 200 },
    { label: '100%', durationMs: 20_000, loadPercent: 100 },
  ],
  seed: SEED,
};

/**
 * The service turns twice as slow for 20 s (a slow dependency, a noisy neighbour) under a steady 150% of its normal
 * capacity, which is then 300% of what it can serve; then it is itself again. The load stays above capacity
 * throughout, so that the limit, not the demand, decides the goodput: the limit it settles at before the slowdown is
 * the one that matches the capacity, and the one it should climb back to.
 */
export const LATENCY_STEP: Scenario = {
  name: 'latency-step',
  title: 'Service time ×2 for 20 s, at 150% of normal capacity throughout',
  service: DEFAULT_SERVICE,
  phases: [
    { label: 'normal', durationMs: 20_000, loadPercent: 150 },
    { label: 'slow ×2', durationMs: 20_000, loadPercent: 150, slowdown: 2 },
    { label: 'normal again', durationMs: 20_000, loadPercent: 150 },
  ],
  recoveryPhase: 2,
  seed: SEED,
};

/** A short burst of five times the capacity (a retry storm, a cron job's fan-out) between stretches of 80%. */
export const OVERLOAD_BURST: Scenario = {
  name: 'overload-burst',
  title: 'A 5 s burst of 500% of capacity between stretches of 80%',
  service: DEFAULT_SERVICE,
  phases: [
    { label: '80%', durationMs: 10_000, loadPercent: 80 },
    { label: '500% burst', durationMs: 5_000, loadPercent: 500 },
    { label: '80% after', durationMs: 15_000, loadPercent: 80 },
  ],
  recoveryPhase: 2,
  seed: SEED,
};

export const SCENARIOS: readonly Scenario[] = [OVERLOAD_STEP, LATENCY_STEP, OVERLOAD_BURST];

/**
 * What `adaptiveConcurrency()` uses when given no algorithm first, then each algorithm at its reference's defaults
 * (given the run's clock, and a seeded random for the jitter it draws), then a fixed limit of half the service's
 * workers (too low: half the capacity idles) and one of ten times them (too high: the queue grows unchecked).
 */
export function contenders(service: ServiceModel): Contender[] {
  const low = Math.max(1, Math.floor(service.workers / 2));
  const high = service.workers * 10;
  return [
    {
      label: 'default: gradient, capped and re-measuring',
      algorithm: ({ clock, random }) =>
        gradient({ clock, random, capToDemand: true, remeasureWhenFaster: true }),
    },
    { label: 'vegas', algorithm: ({ random }) => vegas({ random }) },
    { label: 'gradient2', algorithm: () => gradient2() },
    { label: 'aimd', algorithm: () => aimd() },
    { label: 'gradient (Envoy)', algorithm: ({ clock, random }) => gradient({ clock, random }) },
    { label: `fixed ${low} (too low)`, algorithm: () => fixedLimit(low) },
    { label: `fixed ${high} (too high)`, algorithm: () => fixedLimit(high) },
  ];
}
