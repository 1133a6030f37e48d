// The adaptive limits' simulation for the page: the scenarios it offers, and POST /api/adaptive running one of them.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SCENARIOS } from '../../adaptive/simulation/scenarios.js';
import { type ScenarioResult, simulateScenario } from '../../adaptive/simulation/simulate-scenario.js';
import { argumentError } from '../../core/errors.js';
import { RefusedBody, readJsonBody, refuseBody, sendJson } from './http-json.js';

/** `GET /api/adaptive/scenarios`: what the page lists. */
export const ADAPTIVE_MENU = SCENARIOS.map(({ name, title }) => ({ name, title }));

/** `{ "scenario": "overload-step" }` is all a request says. */
const MAX_BODY_BYTES = 1024;

/**
 * A scenario's results, by name. Each is fixed (seeded, on a virtual clock) and takes a second or so of CPU to
 * compute, so it is computed once per process, when first asked for.
 */
const computed = new Map<string, ScenarioResult>();

/**
 * Answers 200 with every contender's results in the named scenario; 400 for a body that names none of them, 413 for
 * one too large.
 */
export async function answerAdaptive(req: IncomingMessage, res: ServerResponse): Promise<void> {
  let name: string;
  try {
    name = scenarioName(await readJsonBody(req, MAX_BODY_BYTES));
  } catch (error) {
    if (!(error instanceof RefusedBody)) throw error;
    const refused = argumentError(`the request body was refused: ${error.message}`);
    refuseBody(req, res, { error: refused.message, code: refused.code, option: null }, error.status);
    return;
  }
  const scenario = SCENARIOS.find((known) => known.name === name);
  if (scenario === undefined) {
    const unknown = argumentError(
      `scenario must be one of ${SCENARIOS.map((known) => known.name).join(', ')}`,
    );
    sendJson(res, 400, { error: unknown.message, code: unknown.code, option: 'scenario' });
    return;
  }
  const result = computed.get(name) ?? simulateScenario(scenario);
  computed.set(name, result);
  sendJson(res, 200, result);
}

function scenarioName(body: unknown): string {
  const { scenario } = (typeof body === 'object' && body !== null ? body : {}) as { scenario?: unknown };
  return typeof scenario === 'string' ? scenario : '';
}
