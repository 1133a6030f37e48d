// The contract of an adaptive limit algorithm: a whole-number limit that moves with each measured round trip.

/** One request's measurement, taken when it ends. */
export interface LimitSample {
  /** From admission to release, in ms (fractions allowed: the clock may be `performance.now()`). */
  readonly rttMs: number;
  /** Requests in flight when this one was admitted, itself included. */
  readonly inFlight: number;
  /** It was dropped: timed out, or answered with a sign of overload (503, 429, a timeout). */
  readonly dropped: boolean;
}

/** The algorithms this library carries, each exact to its reference implementation. */
export type AlgorithmName = 'vegas' | 'gradient2' | 'aimd' | 'gradient';

export interface LimitAlgorithm {
  readonly name: AlgorithmName;
  /** The current limit: a whole number, at least 1. */
  readonly limit: number;
  /** Learns from one ended request; returns the limit after it. */
  sample(sample: LimitSample): number;
  /**
   * The round-trip figures the algorithm keeps, in ms, for metrics: Vegas `{ noLoad }`, Gradient2 `{ short, long }`,
   * AIMD `{}`, Envoy's gradient `{ minimum, sampled }`. A figure not known yet is absent.
   */
  readonly rtt: Readonly<Record<string, number>>;
}

/** Milliseconds on a monotonic clock: `performance.now` by default, injected by tests and the simulation. */
export type Clock = () => number;

/** A uniform random number in [0, 1): `Math.random` by default, seeded by tests and the simulation. */
export type Random = () => number;
