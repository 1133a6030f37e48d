// The simulation's random draws, from a seeded PRNG, so that a scenario gives the same figures in every run.
import type { Random } from '../algorithms/algorithm.js';

/** An exponential draw of mean `meanMs`: the gap between two arrivals of a Poisson process. */
export function exponential(random: Random, meanMs: number): number {
  // 1 - u is in (0, 1], so the logarithm is finite.
  return -meanMs * Math.log(1 - random());
}

/** A standard normal draw (Box-Muller, one of the pair). */
export function standardNormal(random: Random): number {
  const radius = Math.sqrt(-2 * Math.log(1 - random()));
  return radius * Math.cos(2 * Math.PI * random());
}
