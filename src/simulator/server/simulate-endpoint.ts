// POST /api/simulate: a scenario as JSON to simulate()'s answer, bounded so that one request cannot hold the server.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { argumentError, TollgateError } from '../../core/errors.js';
import type { PolicyDescription } from '../../policies/description.js';
import { generateArrivals } from '../engine/arrivals.js';
import type { LimiterSpec } from '../engine/limiter-spec.js';
import type { PatternSpec } from '../engine/pattern-spec.js';
import type { ServiceSpec } from '../engine/service-spec.js';
import { type Simulation, simulate } from '../engine/simulate.js';
import { RefusedBody, readJsonBody, refuseBody, sendJson } from './http-json.js';

/** Arrivals one request may simulate: 4 policies of this many stay a few MB of JSON. */
export const MAX_SIMULATED_ARRIVALS = 20_000;
/** The page offers two to four policies side by side. */
export const MAX_SIMULATED_POLICIES = 4;
/**
 * The most `simulationWork` one request may ask for, refused before anything runs: the endpoint is not rate
 * limited, and a simulation holds the event loop. The heaviest scenarios it admits (four sliding window logs of
 * limit 302 at cost 302, each of 20,000 arrivals emptying and refilling the log; four concurrency limits of 19 slots
 * held all along over 20,000 arrivals) hold it for a fraction of a second (docs/benchmarks.md has the figure); the
 * page's patterns at their defaults need under 30,000, lockouts and concurrency limits included.
 */
export const MAX_SIMULATION_WORK = 25_000_000;
/** A scenario at the arrival cap, pasted as JSON, takes well under this. */
const MAX_BODY_BYTES = 1024 * 1024;

interface SimulateRequest {
  readonly policies?: unknown;
  readonly arrivals?: unknown;
  readonly pattern?: unknown;
  readonly cost?: unknown;
  readonly service?: unknown;
}

/**
 * Answers 200 with the simulation; 400 with the library's `{ error, code, option }` for a bad scenario; 413 or
 * 400 for a body too large or not JSON. Anything else is a fault, and rejects. `policies` are the kinds beyond the
 * built-in ones that its specs may name.
 */
export async function answerSimulate(
  req: IncomingMessage,
  res: ServerResponse,
  policies?: readonly PolicyDescription[],
): Promise<void> {
  try {
    sendJson(res, 200, runScenario(await readJsonBody(req, MAX_BODY_BYTES), policies));
  } catch (error) {
    if (error instanceof TollgateError) {
      sendJson(res, 400, { error: error.message, code: error.code, option: error.option ?? null });
    } else if (error instanceof RefusedBody) {
      // Answered as the argument error it is, so that its message ends as every other error answer's does.
      const refused = argumentError(`the request body was refused: ${error.message}`);
      refuseBody(req, res, { error: refused.message, code: refused.code, option: null }, error.status);
    } else {
      throw error;
    }
  }
}

/** `{ policies, cost?, service?, pattern | arrivals }` to `simulate()`'s output, or a TollgateError. */
function runScenario(body: unknown, described: readonly PolicyDescription[] | undefined): Simulation {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw argumentError('the body must be a JSON object { policies, pattern | arrivals, cost?, service? }');
  }
  const { policies, arrivals, pattern, cost, service } = body as SimulateRequest;
  if (Array.isArray(policies) && policies.length > MAX_SIMULATED_POLICIES) {
    throw argumentError(`at most ${MAX_SIMULATED_POLICIES} policies can be compared at once`);
  }
  if ((arrivals === undefined) === (pattern === undefined)) {
    throw argumentError('give exactly one of `pattern` and `arrivals`');
  }
  const times =
    pattern === undefined ? arrivals : generateArrivals(pattern as PatternSpec, MAX_SIMULATED_ARRIVALS);
  if (Array.isArray(times) && times.length > MAX_SIMULATED_ARRIVALS) {
    throw argumentError(`at most ${MAX_SIMULATED_ARRIVALS} arrivals can be simulated at once`);
  }
  return simulate(
    {
      policies: policies as LimiterSpec[],
      arrivals: times as number[],
      ...(cost === undefined ? {} : { cost: cost as number }),
      ...(service === undefined ? {} : { service: service as ServiceSpec }),
    },
    { maxWork: MAX_SIMULATION_WORK, ...(described === undefined ? {} : { policies: described }) },
  );
}
