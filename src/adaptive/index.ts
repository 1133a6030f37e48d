// tollgate/adaptive: concurrency limits that follow latency, the four algorithms that move them, and their simulation.

export type { Ending } from '../policies/local-policy.js';
export {
  type AdaptiveConcurrency,
  type AdaptiveConcurrencyOptions,
  type AdaptiveStats,
  adaptiveConcurrency,
} from './adaptive-concurrency.js';
export { type AimdOptions, aimd } from './algorithms/aimd.js';
export type { AlgorithmName, Clock, LimitAlgorithm, LimitSample, Random } from './algorithms/algorithm.js';
export { type GradientOptions, gradient } from './algorithms/gradient.js';
export { type Gradient2Options, gradient2 } from './algorithms/gradient2.js';
export { type LimitFunction, type VegasOptions, vegas } from './algorithms/vegas.js';
