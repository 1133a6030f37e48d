// tollgate/simulation: run the library's own policies over arrival times, and make arrival times from traffic patterns.
export {
  boundaryBurst,
  bursts,
  generateArrivals,
  MAX_GENERATED_ARRIVALS,
  ramp,
  random,
  steady,
} from './arrivals.js';
export type { PatternKind, PatternSpec } from './pattern-spec.js';
export { type PolicySpec, policyFromSpec } from './policy-spec.js';
export type { SimulationInput } from './scenario.js';
export {
  type LevelSample,
  type PolicySimulation,
  type Simulation,
  type SimulationLimits,
  simulate,
} from './simulate.js';
export type { SimulationSummary, TimelineEntry } from './summary.js';
export { simulationWork } from './work.js';
