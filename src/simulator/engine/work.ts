// What a simulation costs, in state entries its transitions touch, worked out from its input without running it.
import type { SimulatedLimiter } from './limiter-spec.js';
import { type CatalogOptions, policyCatalog } from './policy-catalog.js';
import { prepare, type Scenario, type SimulationInput } from './scenario.js';

/**
 * What `simulate(input)` costs, in state entries its transitions touch, worked out without running it: every
 * evaluation (one per arrival and one per level sample, for each policy) counts 1, plus the entries of state it
 * reads: a sliding window log copies as many as the log holds (up to its limit, or the units the arrivals can have
 * admitted when fewer, and none when the cost is above the limit: nothing is ever admitted), and a concurrency
 * limit passes four times over its slots (up to `max`, or the number of arrivals when fewer) and adds three
 * evaluations per arrival for its release (the refund reads the state twice, and a cost-0 evaluation reads the level after it).
 * A lockout counts its policy twice (a request it denies reads the policy's unspent view as well) and itself once.
 * The other policies keep O(1) state. A policy is known by what it says of itself, not by its kind: a leased one
 * (whose requests hold slots) costs as a concurrency limit, and one whose state is an object (`stateWidth` 0, a
 * list read whole) as a sliding window log. Throws what `simulate` throws for the same input and `options`.
 */
export function simulationWork(input: SimulationInput, options: CatalogOptions = {}): number {
  return workOf(prepare(input, policyCatalog(options.policies)));
}

export function workOf({ limiters, arrivals, cost, sampleTimes }: Scenario): number {
  let work = 0;
  for (const limiter of limiters) {
    const evaluations = arrivals.length * (limiter.policy.leased ? 4 : 1) + sampleTimes.length;
    const perEvaluation = 1 + stateRead(limiter, arrivals.length, cost);
    work +=
      limiter.blockMs === undefined ? evaluations * perEvaluation : evaluations * (2 * perEvaluation + 1);
  }
  return work;
}

/** The entries of state one evaluation of the limiter's policy reads, at most. */
function stateRead({ policy }: SimulatedLimiter, arrivals: number, cost: number): number {
  // A concurrency evaluation passes over its slots four times: the live ones, the others, their expiries sorted.
  if (policy.leased) return 4 * Math.min(policy.limit, arrivals);
  // A state kept as an object is a list, copied whole: up to a unit per entry, none when nothing is ever admitted.
  if (policy.stateWidth !== 0 || cost > policy.limit) return 0;
  return Math.min(policy.limit, arrivals * cost);
}
