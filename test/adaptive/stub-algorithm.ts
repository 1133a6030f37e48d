// A limit algorithm for tests: its limit set by hand, every sample it is given recorded, nothing learnt.
import type { AlgorithmName, LimitAlgorithm, LimitSample } from '../../src/adaptive/algorithms/algorithm.js';

export class StubAlgorithm implements LimitAlgorithm {
  readonly name: AlgorithmName;
  limit: number;
  rtt: Readonly<Record<string, number>> = {};
  readonly samples: LimitSample[] = [];

  constructor(limit: number, name: AlgorithmName = 'vegas') {
    this.limit = limit;
    this.name = name;
  }

  sample(sample: LimitSample): number {
    this.samples.push(sample);
    return this.limit;
  }
}

/** A settable monotonic clock, in ms. */
export class ManualClock {
  nowMs = 0;
  readonly read = (): number => this.nowMs;

  advance(ms: number): void {
    this.nowMs += ms;
  }
}
