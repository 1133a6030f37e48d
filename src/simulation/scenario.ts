// A simulation's input checked and made ready to run: its policies built, its arrivals checked, its sample times laid out.
import { TollgateError } from '../errors.js';
import type { AnyPolicy } from '../policies/policy.js';
import { positiveInteger } from '../validate.js';
import { argumentError } from './argument-error.js';
import { type PolicySpec, policyFromSpec } from './policy-spec.js';

export interface SimulationInput {
  readonly policies: readonly PolicySpec[];
  /** Arrival times in whole ms from the start, in ascending order (equal times are simultaneous requests). */
  readonly arrivals: readonly number[];
  /** Units every request spends. Default 1. */
  readonly cost?: number;
}

export interface Scenario {
  readonly policies: readonly AnyPolicy[];
  readonly arrivals: readonly number[];
  readonly cost: number;
  /** When the level is read between requests: see `PolicySimulation.levels`. */
  readonly sampleTimes: readonly number[];
}

/** Level samples per run: enough for a smooth line at laptop width, few enough to keep responses small. */
const SAMPLES = 600;

/** Checks `input` and builds its policies; throws what `simulate` throws for it. */
export function prepare(input: SimulationInput): Scenario {
  if (typeof input !== 'object' || input === null) {
    throw argumentError('the simulation input must be an object { policies, arrivals, cost? }');
  }
  if (!Array.isArray(input.policies) || input.policies.length === 0) {
    throw argumentError('`policies` must be a non-empty array of policy specs');
  }
  const policies = input.policies.map((spec, i) => {
    try {
      return policyFromSpec(spec);
    } catch (error) {
      // Say which policy is wrong, keeping the factory's code and wording.
      if (!(error instanceof TollgateError)) throw error;
      throw new TollgateError(error.code, `policy ${i + 1}: ${error.message}`, {
        ...(error.option === undefined ? {} : { option: error.option }),
        cause: error,
      });
    }
  });
  const arrivals = checkArrivals(input.arrivals);
  const cost = positiveInteger('cost', input.cost ?? 1);
  const last = arrivals.at(-1) ?? 0;
  const end = last + Math.ceil(last / 10);
  const step = Math.max(1, Math.ceil(end / SAMPLES));
  const sampleTimes: number[] = [];
  for (let t = 0; t <= end; t += step) sampleTimes.push(t);
  return { policies, arrivals, cost, sampleTimes };
}

function checkArrivals(arrivals: unknown): number[] {
  if (!Array.isArray(arrivals)) throw argumentError('`arrivals` must be an array of ms offsets');
  let previous = 0;
  arrivals.forEach((t: unknown, i) => {
    // Policies count time in whole ms; a fraction would break the token bucket's integer arithmetic.
    if (typeof t !== 'number' || !Number.isSafeInteger(t) || t < 0) {
      throw argumentError(
        `arrival ${i + 1} must be a non-negative whole number of ms (received ${String(t)})`,
      );
    }
    if (t < previous) {
      throw argumentError(
        `arrivals must be in ascending order (arrival ${i + 1}, ${t}, is before ${previous})`,
      );
    }
    previous = t;
  });
  return arrivals as number[];
}
