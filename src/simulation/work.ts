// What a simulation costs, in state entries its transitions touch, worked out from its input without running it.
import { prepare, type Scenario, type SimulationInput } from './scenario.js';

/**
 * What `simulate(input)` costs, in state entries its transitions touch, worked out without running it: every
 * evaluation (one per arrival and one per level sample, for each policy) counts 1, plus, for a sliding window
 * log, the entries it copies, as many as the log holds: up to its limit, or the units the arrivals can have
 * admitted when fewer, and none when the cost is above the limit (nothing is ever admitted). The other
 * policies keep O(1) state. Throws what `simulate` throws for the same input.
 */
export function simulationWork(input: SimulationInput): number {
  return workOf(prepare(input));
}

export function workOf({ policies, arrivals, cost, sampleTimes }: Scenario): number {
  const evaluations = arrivals.length + sampleTimes.length;
  let work = 0;
  for (const policy of policies) {
    const log =
      policy.kind !== 'sliding-window' || cost > policy.limit
        ? 0
        : Math.min(policy.limit, arrivals.length * cost);
    work += evaluations * (1 + log);
  }
  return work;
}
