// simulate(): every policy run over the same arrivals with the library's own transitions, as a store threads them.
import type { AnyPolicy, PolicyKind } from '../policies/policy.js';
import { positiveInteger } from '../validate.js';
import { argumentError } from './argument-error.js';
import { prepare, type SimulationInput } from './scenario.js';
import { type SimulationSummary, summarize, type TimelineEntry } from './summary.js';
import { workOf } from './work.js';

/** The level between requests, read with a cost-0 evaluation that changes nothing (as `limiter.peek` does). */
export interface LevelSample {
  readonly timeMs: number;
  readonly level: number;
}

export interface PolicySimulation {
  /** The policy as its factory built it (durations in ms, defaults filled in). */
  readonly policy: {
    readonly kind: PolicyKind;
    readonly name: string;
    readonly limit: number;
    readonly windowMs: number;
  };
  /** What `level` counts: tokens left in a bucket, or units counted in a window (estimated, for the counter). */
  readonly level: 'tokens' | 'window-count';
  readonly timeline: readonly TimelineEntry[];
  /** Evenly spaced from 0 to a tenth past the last arrival, so the chart shows refill and expiry between requests. */
  readonly levels: readonly LevelSample[];
  readonly summary: SimulationSummary;
}

export interface Simulation {
  readonly arrivals: readonly number[];
  readonly cost: number;
  /** Index-aligned with the input's policies. */
  readonly policies: readonly PolicySimulation[];
}

/** Bounds on what one `simulate()` call may cost, for a caller serving simulations to others. */
export interface SimulationLimits {
  /** Refuse, before running anything, a scenario whose `simulationWork` is above this. Default: no bound. */
  readonly maxWork?: number;
}

/**
 * Runs every policy over the same arrivals, threading each one's state as a store does (the transition's `next`
 * replaces the state when defined), one client, one request per arrival. No policy arithmetic happens here:
 * every figure is a `PolicyResult` field from the policy's own `evaluate` (a window's count is its limit minus
 * `remaining`), or a count of them.
 */
export function simulate(input: SimulationInput, limits: SimulationLimits = {}): Simulation {
  const scenario = prepare(input);
  if (limits.maxWork !== undefined) {
    const maxWork = positiveInteger('maxWork', limits.maxWork);
    const work = workOf(scenario);
    if (work > maxWork) {
      throw argumentError(
        `at most ${maxWork} units of work can be simulated at once (this scenario needs ${work}: a sliding ` +
          'window log costs up to its limit per arrival and per level sample; use fewer arrivals, a smaller ' +
          'limit or a sliding-window-counter)',
      );
    }
  }
  const { policies, arrivals, cost, sampleTimes } = scenario;
  return {
    arrivals: [...arrivals],
    cost,
    policies: policies.map((policy) => run(policy, arrivals, cost, sampleTimes)),
  };
}

function run(
  policy: AnyPolicy,
  arrivals: readonly number[],
  cost: number,
  sampleTimes: readonly number[],
): PolicySimulation {
  const levelOf = (remaining: number) =>
    policy.kind === 'token-bucket' ? remaining : policy.limit - remaining;
  const timeline: TimelineEntry[] = [];
  const levels: LevelSample[] = [];
  let state: unknown;
  let s = 0;
  const sampleUntil = (timeMs: number) => {
    for (; s < sampleTimes.length && (sampleTimes[s] as number) <= timeMs; s++) {
      const at = sampleTimes[s] as number;
      levels.push({ timeMs: at, level: levelOf(policy.evaluate(state, at, 0).result.remaining) });
    }
  };
  for (const timeMs of arrivals) {
    sampleUntil(timeMs);
    const { result, next } = policy.evaluate(state, timeMs, cost);
    if (next !== undefined) state = next;
    const { allowed, remaining, retryAfterMs } = result;
    timeline.push({ timeMs, allowed, remaining, retryAfterMs, level: levelOf(remaining) });
  }
  sampleUntil(Number.POSITIVE_INFINITY);
  return {
    policy: { kind: policy.kind, name: policy.name, limit: policy.limit, windowMs: policy.windowMs },
    level: policy.kind === 'token-bucket' ? 'tokens' : 'window-count',
    timeline,
    levels,
    summary: summarize(timeline, policy.windowMs),
  };
}
