// A simulation's input checked and made ready to run: its limiters built, its arrivals checked, its sample times laid out.
import { argumentError, configError, inContext, TollgateError } from '../../core/errors.js';
import { positiveInteger } from '../../core/validate.js';
import { type LimiterSpec, limiterFromSpec, type SimulatedLimiter } from './limiter-spec.js';
import { type PolicyCatalog, policyCatalog } from './policy-catalog.js';
import { type ServiceSpec, serviceTimes } from './service-spec.js';

export interface SimulationInput {
  /** One simulated limiter each: a policy spec, with `blockMs` for a lockout. */
  readonly policies: readonly LimiterSpec[];
  /** Arrival times in whole ms from the start, in ascending order (equal times are simultaneous requests). */
  readonly arrivals: readonly number[];
  /** Units every request spends. Default 1. */
  readonly cost?: number;
  /** How long each admitted request holds its slot: required with a concurrency policy, unused by the others. */
  readonly service?: ServiceSpec;
}

export interface Scenario {
  readonly limiters: readonly SimulatedLimiter[];
  readonly arrivals: readonly number[];
  readonly cost: number;
  /** Each request's service time, index-aligned with `arrivals`; empty without a `service`. */
  readonly serviceMs: readonly number[];
  /** When the level is read between requests: see `PolicySimulation.levels`. */
  readonly sampleTimes: readonly number[];
}

/** Level samples per run: enough for a smooth line at laptop width, few enough to keep responses small. */
const SAMPLES = 600;

/** Checks `input` and builds its limiters from `catalog`; throws what `simulate` throws for it. */
export function prepare(input: SimulationInput, catalog: PolicyCatalog = policyCatalog()): Scenario {
  if (typeof input !== 'object' || input === null) {
    throw argumentError('the simulation input must be an object { policies, arrivals, cost?, service? }');
  }
  if (!Array.isArray(input.policies) || input.policies.length === 0) {
    throw argumentError('`policies` must be a non-empty array of policy specs');
  }
  // Say which policy is wrong, keeping the factory's code and wording.
  const limiters = input.policies.map((spec, i) =>
    prefixed(`policy ${i + 1}`, () => limiterFromSpec(spec, catalog)),
  );
  const arrivals = checkArrivals(input.arrivals);
  const cost = positiveInteger('cost', input.cost ?? 1);
  const { service } = input;
  const serviceMs =
    service === undefined ? [] : prefixed('service', () => serviceTimes(service, arrivals.length));
  const leased = limiters.some((limiter) => limiter.policy.leased);
  if (leased && service === undefined) {
    throw configError(
      'service',
      'is required to simulate a concurrency policy: how long each admitted request holds its slot, such as ' +
        '{ "kind": "fixed", "durationMs": "2s" }',
    );
  }
  // The run lasts until the last arrival or, with a concurrency limit, until the last request could finish.
  const finishes = leased ? arrivals.map((t, i) => t + (serviceMs[i] as number)) : [];
  const last = Math.max(arrivals.at(-1) ?? 0, ...finishes);
  const end = last + Math.ceil(last / 10);
  const step = Math.max(1, Math.ceil(end / SAMPLES));
  const sampleTimes: number[] = [];
  for (let t = 0; t <= end; t += step) sampleTimes.push(t);
  return { limiters, arrivals, cost, serviceMs, sampleTimes };
}

/** Runs `build`, prefixing the message of a library error it throws with `where`, its code and option kept. */
function prefixed<T>(where: string, build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (!(error instanceof TollgateError)) throw error;
    throw inContext(error, (message) => `${where}: ${message}`);
  }
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
