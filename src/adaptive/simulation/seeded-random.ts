// The simulation's randomness, seeded so that a scenario gives the same figures in every run and on every machine.
import type { Random } from '../algorithms/algorithm.js';

/**
 * mulberry32: a small, well-mixed 32-bit PRNG; floats in [0, 1). The simulator's engine has its own copy, which
 * this layer may not import.
 */
export function mulberry32(seed: number): Random {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

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
