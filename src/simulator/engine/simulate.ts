// simulate(): every limiter run over the same arrivals with the library's own transitions, as a store threads them.

import { argumentError } from '../../core/errors.js';
import { positiveInteger } from '../../core/validate.js';
import type { PolicyKind, PolicyLevel } from '../../policies/policy.js';
import { type CatalogOptions, policyCatalog } from './policy-catalog.js';
import type { BlockedPeriod, LevelSample } from './run.js';
import { runLimiter } from './run.js';
import { prepare, type SimulationInput } from './scenario.js';
import { type Release, type SimulationSummary, summarize, type TimelineEntry } from './summary.js';
import { workOf } from './work.js';

export interface PolicySimulation {
  /** The policy as its factory built it (durations in ms, defaults filled in). */
  readonly policy: {
    readonly kind: PolicyKind;
    readonly name: string;
    readonly limit: number;
    readonly windowMs: number;
    /** A concurrency limit's lease. */
    readonly leaseMs?: number;
  };
  /** The limiter's lockout, in ms, when it has one. */
  readonly blockMs?: number;
  /**
   * What `level` counts: tokens left in a bucket, units counted in a window (estimated, for the counter), or slots
   * held (requests in flight) under a concurrency limit.
   */
  readonly level: PolicyLevel;
  readonly timeline: readonly TimelineEntry[];
  /** Evenly spaced from 0 to a tenth past the end of the run, so the chart shows refill and expiry between requests. */
  readonly levels: readonly LevelSample[];
  /** A concurrency limit's releases, in time order; empty for the other kinds. */
  readonly releases: readonly Release[];
  /** The lockouts, in time order; empty without `blockMs`. */
  readonly blockedPeriods: readonly BlockedPeriod[];
  readonly summary: SimulationSummary;
}

export interface Simulation {
  readonly arrivals: readonly number[];
  readonly cost: number;
  /** Each request's service time, index-aligned with `arrivals`, when the input had a `service`. */
  readonly serviceMs?: readonly number[];
  /** Index-aligned with the input's policies. */
  readonly policies: readonly PolicySimulation[];
}

/** Bounds on what one `simulate()` call may cost, for a caller serving simulations to others. */
export interface SimulationLimits {
  /** Refuse, before running anything, a scenario whose `simulationWork` is above this. Default: no bound. */
  readonly maxWork?: number;
}

/** `simulate()`'s options: its bounds, and the policy kinds its specs may name beyond the built-in ones. */
export interface SimulationOptions extends SimulationLimits, CatalogOptions {}

/**
 * Runs every limiter over the same arrivals, one client, one request per arrival, through `evaluatePolicies` (the
 * step both stores take), threading each state as a store does. No policy arithmetic happens here: every figure
 * is a `PolicyResult` field from the policies' own transitions (a window's count is its limit minus `remaining`),
 * or a count of them.
 */
export function simulate(input: SimulationInput, options: SimulationOptions = {}): Simulation {
  const scenario = prepare(input, policyCatalog(options.policies));
  if (options.maxWork !== undefined) {
    const maxWork = positiveInteger('maxWork', options.maxWork);
    const work = workOf(scenario);
    if (work > maxWork) {
      throw argumentError(
        `at most ${maxWork} units of work can be simulated at once (this scenario needs ${work}: a sliding ` +
          'window log or a concurrency limit costs up to its limit per evaluation; use fewer arrivals, a ' +
          'smaller limit or a sliding-window-counter)',
      );
    }
  }
  return {
    arrivals: [...scenario.arrivals],
    cost: scenario.cost,
    ...(input.service === undefined ? {} : { serviceMs: scenario.serviceMs }),
    policies: scenario.limiters.map((limiter): PolicySimulation => {
      const { policy, blockMs, leaseMs } = limiter;
      const { timeline, levels, releases, blockedPeriods } = runLimiter(limiter, scenario);
      const { kind, name, limit, windowMs, level, leased } = policy;
      return {
        policy: { kind, name, limit, windowMs, ...(leaseMs === undefined ? {} : { leaseMs }) },
        ...(blockMs === undefined ? {} : { blockMs }),
        level,
        timeline,
        levels,
        releases,
        blockedPeriods,
        summary: summarize({
          timeline,
          releases,
          windowMs,
          lockout: blockMs !== undefined,
          leased,
        }),
      };
    }),
  };
}
