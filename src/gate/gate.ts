// The framework-free half of every adapter: options to a limiter, and one request to an outcome that never throws.

import { configError, TollgateError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { errorStatus, knownKeys, loggerOption, oneOf, optionalFunction } from '../core/validate.js';
import type { Decision } from '../decision/decision.js';
import { type RateLimitInfo, rateLimitInfo } from '../decision/rate-limit-info.js';
import { addressIdentity } from '../identity/address-identity.js';
import type { Identity } from '../identity/identity.js';
import type { Limiter } from '../limiter/limiter.js';
import { tierSelector } from '../limiter/tiers.js';
import { type Complete, completion, resolveRefunds } from './completion.js';
import {
  type DecisionEvent,
  FOREIGN_OPTIONS,
  type GateOptions,
  resolveBody,
  resolveCost,
  resolveHeaders,
  resolveLimiter,
} from './options.js';

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

const GATE_OPTIONS = [
  'requestsPerMinute',
  'capacity',
  'policy',
  'limiter',
  'scope',
  'store',
  'cost',
  'identifier',
  'unidentified',
  'skip',
  'headers',
  'legacyHeaders',
  'legacyReset',
  'message',
  'statusCode',
  'logger',
  'shadow',
  'failOpen',
  'blockMs',
  'tiers',
  'onDecision',
  'skipFailedRequests',
  'skipSuccessfulRequests',
  'requestWasSuccessful',
  'abortedRequestsFail',
];
const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;
// Shared by every answer they make, so frozen: an adapter or handler that changed one would change them all.
const FAILURE_BODY = Object.freeze({
  error: 'Internal Server Error',
  message: 'The rate limiter could not decide.',
});
/** The one identity of every request without one, so that a flood of them spends one quota. */
const UNKNOWN_IDENTITY = 'unknown';
const REFUSED_UNIDENTIFIED: Extract<GateOutcome, { action: 'fail' }> = {
  action: 'fail',
  status: 400,
  body: Object.freeze({ error: 'Bad Request', message: 'The client could not be identified.' }),
  error: new TollgateError(
    'ERR_TOLLGATE_ARGUMENT',
    "the request has no identity, and `unidentified` is 'reject'",
  ),
};

export function createGate<Req, Res = unknown>(
  options: GateOptions<Req, Res>,
  adapter: {
    readonly name: string;
    /** The client's address as the framework reports it; the gate turns it into the default identity. */
    readonly identifier: (req: Req) => Identity | Promise<Identity>;
    readonly options?: readonly string[];
    /** Options the adapter does not take, with what to write instead, over the other limiters' (`FOREIGN_OPTIONS`). */
    readonly elsewhere?: Readonly<Record<string, string>>;
    /** false: the adapter hands a failure to the framework's error handling, which reports it, so the gate does not. */
    readonly reportsFailures?: false;
  },
): Gate<Req, Res> {
  if (typeof options !== 'object' || options === null)
    throw configError('options', 'must be an object', options);
  knownKeys(adapter.name, options, [...GATE_OPTIONS, ...(adapter.options ?? [])], {
    ...FOREIGN_OPTIONS,
    ...adapter.elsewhere,
  });
  const limiter = resolveLimiter(options);
  const select = options.tiers === undefined ? undefined : tierSelector(limiter, options.tiers);
  const identify =
    optionalFunction('identifier', options.identifier) ?? byAddressIdentity(adapter.identifier);
  const rejectUnidentified =
    oneOf('unidentified', options.unidentified ?? 'shared', ['shared', 'reject'] as const) === 'reject';
  const onDecision = optionalFunction('onDecision', options.onDecision);
  const skip = optionalFunction('skip', options.skip);
  const cost = resolveCost(options.cost);
  const headersOf = resolveHeaders(options);
  const status = errorStatus('statusCode', options.statusCode ?? 429);
  const body = resolveBody(options.message ?? 'Too many requests, please try again later.');
  const shadow = options.shadow ?? false;
  if (typeof shadow !== 'boolean') throw configError('shadow', 'must be a boolean', shadow);
  const logger = loggerOption(options.logger, console);
  const refunds = resolveRefunds(options);

  /** A request's decision, and what it means for the request: at once when the limiter's store answers at once. */
  const count = (
    req: Req,
    identifier: string,
    chosen: Limiter,
    units: number,
    log: Logger,
  ): GateOutcome<Res> | Promise<GateOutcome<Res>> => {
    // Timed only when someone listens, so an unobserved gate pays nothing for it.
    const started = onDecision === undefined ? 0 : performance.now();
    if (chosen.store.synchronous === true)
      return answer(
        req,
        identifier,
        chosen,
        units,
        chosen.consumeSync(identifier, { cost: units }),
        started,
        log,
      );
    return chosen
      .consume(identifier, { cost: units })
      .then((decision) => answer(req, identifier, chosen, units, decision, started, log));
  };
  const answer = (
    req: Req,
    identifier: string,
    chosen: Limiter,
    units: number,
    decision: Decision,
    started: number,
    log: Logger,
  ): GateOutcome<Res> => {
    if (onDecision !== undefined) {
      const event = { scope: chosen.scope, decision, latencyMs: performance.now() - started, shadow };
      notify(onDecision, event, req, log);
    }
    const headers = headersOf === undefined ? NO_HEADERS : headersOf(decision, identifier);
    const info = rateLimitInfo(decision, identifier);
    if (decision.allowed) {
      const spent = { decision, limiter: chosen, identity: identifier, cost: units, req };
      const complete = completion(spent, refunds, log);
      return complete === undefined
        ? { action: 'next', headers, decision, info }
        : { action: 'next', headers, decision, info, complete };
    }
    // Shadow mode lets a denied request through: telling the client to wait would be a lie.
    if (shadow) return { action: 'next', headers: withoutRetryAfter(headers), decision, info };
    return { action: 'reject', headers, status, body, decision, info };
  };
  const failed = (error: unknown, log: Logger): GateOutcome<Res> => {
    // Error first: pino reads its first argument as the object to log, console prints both either way.
    if (adapter.reportsFailures !== false) log.error(error, '[tollgate] rate limiter failed; answering 500');
    return { action: 'fail', status: 500, body: FAILURE_BODY, error };
  };
  /** Every step awaited, as each may answer later. */
  const general = async (req: Req, log: Logger): Promise<GateOutcome<Res>> => {
    try {
      if (skip !== undefined && (await skip(req)))
        return { action: 'next', headers: NO_HEADERS, decision: undefined, info: undefined };
      // No identity is no licence: a client that resets its connection leaves no address to count it by.
      const identity = await identify(req);
      if (!identity && rejectUnidentified) return REFUSED_UNIDENTIFIED;
      const chosen = select === undefined ? limiter : await select(req);
      const units = typeof cost === 'number' ? cost : await cost(req);
      return await count(req, identity || UNKNOWN_IDENTITY, chosen, units, log);
    } catch (error) {
      return failed(error, log);
    }
  };
  /** With neither skip, tiers nor a cost function, only the identity and the store may answer later. */
  const direct = skip === undefined && select === undefined && typeof cost === 'number';
  const counted = (req: Req, identity: Identity, log: Logger) => {
    if (!identity && rejectUnidentified) return REFUSED_UNIDENTIFIED;
    return count(req, identity || UNKNOWN_IDENTITY, limiter, cost as number, log);
  };
  const checkNow = (req: Req, log: Logger = logger): GateOutcome<Res> | Promise<GateOutcome<Res>> => {
    if (!direct) return general(req, log);
    try {
      const identity = identify(req);
      const outcome = isPending(identity)
        ? identity.then((known) => counted(req, known, log))
        : counted(req, identity, log);
      return isPending(outcome) ? outcome.then(undefined, (error: unknown) => failed(error, log)) : outcome;
    } catch (error) {
      return failed(error, log);
    }
  };
  const check = (req: Req, log?: Logger): Promise<GateOutcome<Res>> => {
    const outcome = checkNow(req, log);
    return isPending(outcome) ? outcome : Promise.resolve(outcome);
  };
  return { limiter, logger, check, checkNow };
}

/** A value that comes later (what `await` would wait for). */
export function isPending<T>(value: T | PromiseLike<T>): value is PromiseLike<T> & Promise<T> {
  return typeof (value as Partial<PromiseLike<T>> | null)?.then === 'function';
}

/** The adapter's address as the default identity; a synchronous address stays synchronous (no promise per request). */
function byAddressIdentity<Req>(
  address: (req: Req) => Identity | Promise<Identity>,
): (req: Req) => Identity | Promise<Identity> {
  const key = (identity: Identity) => (typeof identity === 'string' ? addressIdentity(identity) : identity);
  return (req) => {
    const identity = address(req);
    return identity instanceof Promise ? identity.then(key) : key(identity);
  };
}

/** A failing observer must not fail the request it observes. */
export function notify<Req>(
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
