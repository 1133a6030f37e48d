// The framework-free half of every adapter: options to a limiter, and one request to an outcome that never throws.

import { argumentError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { isPending } from '../core/pending.js';
import { listening, step, stepping, TRACES, traced } from '../core/trace.js';
import type { Decision } from '../decision/decision.js';
import { type RateLimitInfo, rateLimitInfo } from '../decision/rate-limit-info.js';
import type { Identity } from '../identity/identity.js';
import type { Limiter } from '../limiter/limiter.js';
import { type Complete, completion } from './completion.js';
import type { DecisionEvent, GateOptions } from './options.js';
import { type GateAdapter, type ResolvedGateOptions, resolveGateOptions } from './resolve-options.js';

export type GateOutcome<Res = unknown> =
  | {
      readonly action: 'next';
      readonly headers: Record<string, string>;
      readonly decision: Decision | undefined;
      /** The figures for the request object (`req.rateLimit` and its kin); undefined when the request was skipped. */
      readonly info: RateLimitInfo | undefined;
      /** Present when the request holds a concurrency slot or a refund to decide until it is over. */
      readonly complete?: Complete<Res>;
    }
  | {
      readonly action: 'reject';
      readonly headers: Record<string, string>;
      readonly status: number;
      readonly body: unknown;
      readonly decision: Decision;
      readonly info: RateLimitInfo;
    }
  /**
   * The gate answers the request itself, without rate-limit headers: 500 when deciding failed (`error` is what
   * threw, logged once here), 400 when `unidentified: 'reject'` refuses a request without an identity (`error` is
   * an `ERR_TOLLGATE_ARGUMENT`, not logged: it is the client's doing, and a flood of them must not flood the log).
   */
  | { readonly action: 'fail'; readonly status: 400 | 500; readonly body: unknown; readonly error: unknown };

export interface Gate<Req, Res = unknown> {
  readonly limiter: Limiter;
  readonly logger: Logger;
  /**
   * Never rejects: every failure becomes a `fail` outcome. `log` stands in for the gate's logger for this request's
   * messages, for a framework that keeps a logger per request (Fastify's `request.log`).
   */
  check(req: Req, log?: Logger): Promise<GateOutcome<Res>>;
  /**
   * `check`, without a promise when every step answers at once: no `skip`, no tiers, no cost function, an identity
   * known at once and a synchronous store (a MemoryStore). An adapter that takes both forms saves a promise and a
   * turn of the microtask queue per request. Never throws, and a promise it returns never rejects.
   */
  checkNow(req: Req, log?: Logger): GateOutcome<Res> | Promise<GateOutcome<Res>>;
}

const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;
// Shared by every answer they make, so frozen: an adapter or handler that changed one would change them all.
const FAILURE_BODY = Object.freeze({
  error: 'Internal Server Error',
  message: 'The rate limiter could not decide.',
});
/**
 * The body of a denial by a policy with a status of its own (an adaptive limit's 503): the server is busy, which
 * `message`, written for a client over its quota, would not say.
 */
const BUSY_BODY = Object.freeze({
  error: 'Service Unavailable',
  message: 'The server is busy, please try again later.',
});
/** The one identity of every request without one, so that a flood of them spends one quota. */
const UNKNOWN_IDENTITY = 'unknown';
const REFUSED_UNIDENTIFIED: Extract<GateOutcome, { action: 'fail' }> = {
  action: 'fail',
  status: 400,
  body: Object.freeze({ error: 'Bad Request', message: 'The client could not be identified.' }),
  error: argumentError("the request has no identity, and `unidentified` is 'reject'"),
};

/**
 * The framework-free half of an adapter: every option checked here, once (a bad one throws `ERR_TOLLGATE_CONFIG`
 * naming it); then `check(req)` turns one request into an outcome that never rejects: `next`, `reject` or `fail`.
 *
 * @example
 * // Connect-style middleware on node:http (docs/extending.md has one whole, with its contract test).
 * const gate = createGate(options, { name: 'rateLimit', identifier: (req) => req.socket.remoteAddress });
 * const middleware = async (req: IncomingMessage, res: ServerResponse, next: () => void) => {
 *   const outcome = await gate.check(req);
 *   if (outcome.action !== 'fail') for (const [k, v] of Object.entries(outcome.headers)) res.setHeader(k, v);
 *   if (outcome.action !== 'next') return res.writeHead(outcome.status).end(JSON.stringify(outcome.body));
 *   if (outcome.complete !== undefined) whenOver(res, outcome.complete, res);
 *   next();
 * };
 */
export function createGate<Req, Res = unknown>(
  options: GateOptions<Req, Res>,
  adapter: GateAdapter<Req>,
): Gate<Req, Res> {
  // Every option checked here, once: what runs per request below only reads the record.
  const gate = resolveGateOptions(options, adapter);
  const checkNow = (req: Req, log: Logger = gate.logger): GateOutcome<Res> | Promise<GateOutcome<Res>> =>
    listening(TRACES.request)
      ? traced(TRACES.request, { adapter: gate.adapter }, () => outcomeOf(gate, req, log))
      : outcomeOf(gate, req, log);
  const check = (req: Req, log?: Logger): Promise<GateOutcome<Res>> => {
    const outcome = checkNow(req, log);
    return isPending(outcome) ? outcome : Promise.resolve(outcome);
  };
  return { limiter: gate.limiter, logger: gate.logger, check, checkNow };
}

/** A request's outcome: at once when every step answers at once, else a promise that never rejects. */
function outcomeOf<Req, Res>(
  gate: ResolvedGateOptions<Req, Res>,
  req: Req,
  log: Logger,
): GateOutcome<Res> | Promise<GateOutcome<Res>> {
  if (!gate.direct) return awaitingEach(gate, req, log);
  try {
    const identity = gate.identify(req);
    const outcome = isPending(identity)
      ? identity.then((known) => counted(gate, req, known, log))
      : counted(gate, req, identity, log);
    return isPending(outcome) ? outcome.then(undefined, (error: unknown) => failed(error, log)) : outcome;
  } catch (error) {
    return failed(error, log);
  }
}

/** Every step awaited, as each may answer later (a skip, a tier, a cost function). */
async function awaitingEach<Req, Res>(
  gate: ResolvedGateOptions<Req, Res>,
  req: Req,
  log: Logger,
): Promise<GateOutcome<Res>> {
  try {
    const { skip, select, cost } = gate;
    if (skip !== undefined && (await skip(req)))
      return { action: 'next', headers: NO_HEADERS, decision: undefined, info: undefined };
    // No identity is no licence: a client that resets its connection leaves no address to count it by.
    const identity = await gate.identify(req);
    if (stepping()) step('identity', { identifier: identity });
    if (!identity && gate.rejectUnidentified) return REFUSED_UNIDENTIFIED;
    const chosen = select === undefined ? gate.limiter : await select(req);
    const units = typeof cost === 'number' ? cost : await cost(req);
    return await count(gate, req, identity || UNKNOWN_IDENTITY, chosen, units, log);
  } catch (error) {
    return failed(error, log);
  }
}

/** A request of the direct path, its identity known: refused, or counted on the gate's own limiter. */
function counted<Req, Res>(
  gate: ResolvedGateOptions<Req, Res>,
  req: Req,
  identity: Identity,
  log: Logger,
): GateOutcome<Res> | Promise<GateOutcome<Res>> {
  if (stepping()) step('identity', { identifier: identity });
  if (!identity && gate.rejectUnidentified) return REFUSED_UNIDENTIFIED;
  return count(gate, req, identity || UNKNOWN_IDENTITY, gate.limiter, gate.cost as number, log);
}

/** A request's decision, and what it means for the request: at once when the limiter's store answers at once. */
function count<Req, Res>(
  gate: ResolvedGateOptions<Req, Res>,
  req: Req,
  identifier: string,
  chosen: Limiter,
  units: number,
  log: Logger,
): GateOutcome<Res> | Promise<GateOutcome<Res>> {
  // Timed only when someone listens, so an unobserved gate pays nothing for it.
  const started = gate.onDecision === undefined ? 0 : performance.now();
  const asked =
    gate.partition === undefined ? { cost: units } : { cost: units, partition: gate.partition(req) };
  if (chosen.store.synchronous === true) {
    const decision = chosen.consumeSync(identifier, asked);
    return answer(gate, req, identifier, chosen, units, decision, started, log);
  }
  return chosen
    .consume(identifier, asked)
    .then((decision) => answer(gate, req, identifier, chosen, units, decision, started, log));
}

/** The outcome of a decision: on, with what it holds to complete, or rejected (let through in shadow mode). */
function answer<Req, Res>(
  gate: ResolvedGateOptions<Req, Res>,
  req: Req,
  identifier: string,
  chosen: Limiter,
  units: number,
  decision: Decision,
  started: number,
  log: Logger,
): GateOutcome<Res> {
  const { onDecision, headersOf, shadow } = gate;
  if (onDecision !== undefined) {
    const event = { scope: chosen.scope, decision, latencyMs: performance.now() - started, shadow };
    notify(onDecision, event, req, log);
  }
  const headers = headersOf === undefined ? NO_HEADERS : headersOf(decision, identifier);
  if (stepping()) step('headers', { fields: headerLine(headers) });
  const info = rateLimitInfo(decision, identifier);
  if (decision.allowed) {
    const spent = { decision, limiter: chosen, identity: identifier, cost: units, req };
    const complete = completion(spent, gate.refunds, log);
    return complete === undefined
      ? { action: 'next', headers, decision, info }
      : { action: 'next', headers, decision, info, complete };
  }
  // Shadow mode lets a denied request through: telling the client to wait would be a lie.
  if (shadow) return { action: 'next', headers: withoutRetryAfter(headers), decision, info };
  const { denyStatus } = decision;
  if (denyStatus !== undefined)
    return { action: 'reject', headers, status: denyStatus, body: BUSY_BODY, decision, info };
  return { action: 'reject', headers, status: gate.status, body: gate.body, decision, info };
}

function failed<Res>(error: unknown, log: Logger): GateOutcome<Res> {
  // Error first: pino reads its first argument as the object to log, console prints both either way.
  log.error(error, '[tollgate] rate limiter failed; answering 500');
  return { action: 'fail', status: 500, body: FAILURE_BODY, error };
}

/** The fields a request is answered with, on one line, as a trace tells them. */
function headerLine(headers: Record<string, string>): string {
  const fields = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
  return fields.length === 0 ? 'none' : fields.join('; ');
}

/** A failing observer must not fail the request it observes. */
function notify<Req>(
  onDecision: (event: DecisionEvent, req: Req) => void,
  event: DecisionEvent,
  req: Req,
  logger: Logger,
): void {
  try {
    onDecision(event, req);
  } catch (error) {
    logger.error(error, '[tollgate] onDecision threw; the request goes on');
  }
}

function withoutRetryAfter(headers: Record<string, string>): Record<string, string> {
  const { 'Retry-After': _, ...rest } = headers;
  return rest;
}
