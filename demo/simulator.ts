// The simulator's Express router: the page, its charting library, and POST /api/simulate running the library's simulate().
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import express, { type ErrorRequestHandler, type Router } from 'express';
import { TollgateError } from '../src/errors.js';
import { generateArrivals, type PatternSpec, type PolicySpec, simulate } from '../src/simulation/index.js';

/** Arrivals one request may simulate: 4 policies of this many stay a few MB of JSON. */
export const MAX_SIMULATED_ARRIVALS = 20_000;
/** The page offers two to four policies side by side. */
export const MAX_SIMULATED_POLICIES = 4;
/**
 * The most `simulationWork` one request may ask for, refused before anything runs: the endpoint is not rate
 * limited, and a simulation holds the event loop. Measured on a 2-core machine, the heaviest scenario it admits
 * (four sliding window logs of limit 302 at cost 302, each of 20,000 arrivals emptying and refilling the log)
 * answers in about 0.3 s; the page's patterns at their defaults need under 25,000.
 */
export const MAX_SIMULATION_WORK = 25_000_000;

// One level below the repo root.
const PAGE_DIR = fileURLToPath(new URL('../simulator/', import.meta.url));
const require = createRequire(import.meta.url);

/**
 * Only these files are served, so no request for an API route touches the file system. uPlot is resolved when
 * asked for, so an install without it still serves the API and the demo routes.
 */
const PAGE_FILES: Readonly<Record<string, () => string>> = {
  '/': () => `${PAGE_DIR}index.html`,
  '/app.js': () => `${PAGE_DIR}app.js`,
  '/style.css': () => `${PAGE_DIR}style.css`,
  '/vendor/uplot.esm.js': () => require.resolve('uplot/dist/uPlot.esm.js'),
  '/vendor/uplot.min.css': () => require.resolve('uplot/dist/uPlot.min.css'),
};

interface SimulateRequest {
  readonly policies?: unknown;
  readonly arrivals?: unknown;
  readonly pattern?: unknown;
  readonly cost?: unknown;
}

export function simulatorRouter(): Router {
  const router = express.Router();
  for (const [route, file] of Object.entries(PAGE_FILES)) {
    router.get(route, (_req, res) => res.sendFile(file()));
  }
  router.post('/api/simulate', express.json({ limit: '1mb' }), (req, res) => {
    res.json(runScenario(req.body as unknown));
  });
  router.use('/api/simulate', simulateErrors);
  return router;
}

/** `{ policies, cost?, pattern | arrivals }` to `simulate()`'s output, or a TollgateError. */
function runScenario(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw argumentError('the body must be a JSON object { policies, pattern | arrivals, cost? }');
  }
  const { policies, arrivals, pattern, cost } = body as SimulateRequest;
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
      policies: policies as PolicySpec[],
      arrivals: times as number[],
      ...(cost === undefined ? {} : { cost: cost as number }),
    },
    { maxWork: MAX_SIMULATION_WORK },
  );
}

/** Bad input answers 400 with the library's message and code; a body too large or not JSON keeps its status. */
const simulateErrors: ErrorRequestHandler = (error: unknown, _req, res, next) => {
  if (error instanceof TollgateError) {
    res.status(400).json({ error: error.message, code: error.code, option: error.option ?? null });
    return;
  }
  const status = (error as { status?: unknown }).status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const message = `the request body was refused: ${(error as Error).message}`;
    res.status(status).json({ error: message, code: 'ERR_TOLLGATE_ARGUMENT', option: null });
    return;
  }
  next(error);
};

function argumentError(message: string): TollgateError {
  return new TollgateError('ERR_TOLLGATE_ARGUMENT', message);
}
