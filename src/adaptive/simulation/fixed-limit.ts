// A limit that never moves: the baseline the adaptive algorithms are measured against, not an algorithm offered.
import type { AlgorithmName, LimitAlgorithm } from '../algorithms/algorithm.js';

/**
 * A fixed concurrency limit as a `LimitAlgorithm`, so that it runs through the same adaptive policy as the others.
 * The contract's names are the public algorithms'; the simulation reports each contender by its own label and never
 * reads this name.
 */
export function fixedLimit(limit: number): LimitAlgorithm {
  return {
    name: 'fixed' as AlgorithmName,
    limit,
    rtt: {},
    sample: () => limit,
  };
}
