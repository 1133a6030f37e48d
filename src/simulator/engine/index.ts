// tollgate/simulation: run the library's own policies over arrival times, and make arrival times from traffic patterns.

export type { PolicyDescription, PolicyField } from '../../policies/description.js';
export { builtInPolicies } from '../../policies/index.js';
export {
  boundaryBurst,
  bursts,
  generateArrivals,
  MAX_GENERATED_ARRIVALS,
  ramp,
  random,
  steady,
} from './arrivals.js';
export type { LimiterSpec } from './limiter-spec.js';
export type { PatternKind, PatternSpec } from './pattern-spec.js';
export type { CatalogOptions } from './policy-catalog.js';
export {
  type BuiltInPolicySpec,
  type DescribedPolicySpec,
  type PolicySpec,
  policyFromSpec,
} from './policy-spec.js';
export type { BlockedPeriod, LevelSample } from './run.js';
export type { SimulationInput } from './scenario.js';
export type { ServiceSpec } from './service-spec.js';
export {
  type PolicySimulation,
  type Simulation,
  type SimulationLimits,
  type SimulationOptions,
  simulate,
} from './simulate.js';
export type { Release, SimulationSummary, TimelineEntry } from './summary.js';
export { simulationWork } from './work.js';
