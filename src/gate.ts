// The framework-free half of every adapter: options to a limiter, and one request to an outcome that never throws.
import type { Decision } from './decision.js';
import type { Duration } from './duration.js';
import { configError, TollgateError } from './errors.js';
import { type Complete, completion, type RefundOptions, resolveRefunds } from './gate-completion.js';
import { HEADER_STYLES, type HeaderStyle, rateLimitHeaders } from './headers.js';
import { addressIdentity } from './identity/address-identity.js';
import type { Identity } from './identity/identity.js';
import { createLimiter, type Limiter } from './limiter.js';
import type { Logger } from './logger.js';
import type { AnyPolicy } from './policies/policy.js';
import { tokenBucket } from './policies/token-bucket.js';
import type { Store } from './stores/store.js';
import { type Tiers, tierSelector } from './tiers.js';
import {
  knownKeys,
  loggerOption,
  nonNegativeInteger,
  oneOf,
  optionalFunction,
  positiveInteger,
} from './validate.js';

/** What the gate reports after each decision, for metrics and logs. */
export interface DecisionEvent {
  /** The scope of the limiter that decided (with `tiers`, the tier's). */
  readonly scope: string;
  readonly decision: Decision;
  /** How long the limiter took, the store's round trip included. */
  readonly latencyMs: number;
  /** The gate is in shadow mode: a denial here was let through. */
  readonly shadow: boolean;
}

/**
 * Options every adapter accepts; `Req` is the framework's request (or context) type, `Res` what it answers with
 * (given to `requestWasSuccessful`).
 */
export interface GateOptions<Req, Res = unknown> extends RefundOptions<Req, Res> {
  /** Sustained rate of the default token bucket. Default 60. 0 rejects everything. */
  readonly requestsPerMinute?: number;
  /** Burst size of the default token bucket. Default `requestsPerMinute`. */
  readonly capacity?: number;
  /** Any policy (or several) instead of the default token bucket. */
  readonly policy?: AnyPolicy | readonly AnyPolicy[];
  /** A ready limiter; excludes the options that build one (`LIMITER_OPTIONS`: `policy`, `store`, `blockMs`...). */
  readonly limiter?: Limiter;
  readonly scope?: string;
  readonly store?: Store;
  /** Units a request spends: a number, or a function of the request. Default 1. */
  readonly cost?: number | ((req: Req) => number | Promise<number>);
  /**
   * The client's identity. The default is the adapter's client address through `addressIdentity()`: IPv4-mapped
   * addresses as IPv4, IPv6 grouped by /64. A falsy identity is handled as `unidentified` says.
   */
  readonly identifier?: (req: Req) => Identity | Promise<Identity>;
  /**
   * A request without an identity: 'shared' (default) counts all of them in one bucket, identity `unknown`;
   * 'reject' answers them 400 without counting. Only `skip` lets a request through unlimited.
   */
  readonly unidentified?: 'shared' | 'reject';
  /** Returns true to let a request through without counting it. */
  readonly skip?: (req: Req) => boolean | Promise<boolean>;
  /** `true` (= 'draft-6'), `false`, or a header style. Default true. */
  readonly headers?: boolean | HeaderStyle;
  /** Message in the default rejection body, or a whole JSON body. */
  readonly message?: string | Record<string, unknown>;
  /** Rejection status. Default 429. */
  readonly statusCode?: number;
  /** Default console. */
  readonly logger?: Logger;
  /** Evaluate and count everything, but never reject: for watching a new limit before enforcing it. */
  readonly shadow?: boolean;
  /** Allow (true) or reject (false) while the store is unreachable. Default: the store's setting. */
  readonly failOpen?: boolean;
  /** A lockout: after a denial the client is denied outright for this long (see `createLimiter`). */
  readonly blockMs?: Duration | 0;
  /** Chooses the limiter per request; requests without a tier use the gate's own limiter. */
  readonly tiers?: Tiers<Req>;
  /**
   * Called after every decision, those on the shared `unknown` bucket included (a skipped request, or one refused
   * by `unidentified: 'reject'`, has none). Its errors are logged, not thrown.
   */
  readonly onDecision?: (event: DecisionEvent, req: Req) => void;
}

export type GateOutcome<Res = unknown> =
  | {
      readonly action: 'next';
      readonly headers: Record<string, string>;
      readonly decision: Decision | undefined;
      /** Present when the request holds a concurrency slot or a refund to decide until it is over. */
      readonly complete?: Complete<Res>;
    }
  | {
      readonly action: 'reject';
      readonly headers: Record<string, string>;
      readonly status: number;
      readonly body: unknown;
      readonly decision: Decision;
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
  /** Never rejects: every failure becomes a `fail` outcome. */
  check(req: Req): Promise<GateOutcome<Res>>;
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
  },
): Gate<Req, Res> {
  if (typeof options !== 'object' || options === null)
    throw configError('options', 'must be an object', options);
  knownKeys(adapter.name, options, [...GATE_OPTIONS, ...(adapter.options ?? [])]);
  const limiter = resolveLimiter(options);
  const select = options.tiers === undefined ? undefined : tierSelector(limiter, options.tiers);
  const identify =
    optionalFunction('identifier', options.identifier) ?? byAddressIdentity(adapter.identifier);
  const rejectUnidentified =
    oneOf('unidentified', options.unidentified ?? 'shared', ['shared', 'reject'] as const) === 'reject';
  const onDecision = optionalFunction('onDecision', options.onDecision);
  const skip = optionalFunction('skip', options.skip);
  const cost = resolveCost(options.cost);
  const style = resolveHeaders(options.headers);
  const status = positiveInteger('statusCode', options.statusCode ?? 429);
  if (status < 400 || status > 599)
    throw configError('statusCode', 'must be an HTTP error status (400-599)', status);
  const body = resolveBody(options.message ?? 'Too many requests, please try again later.');
  const shadow = options.shadow ?? false;
  if (typeof shadow !== 'boolean') throw configError('shadow', 'must be a boolean', shadow);
  const logger = loggerOption(options.logger, console);
  const refunds = resolveRefunds(options);

  const check = async (req: Req): Promise<GateOutcome<Res>> => {
    try {
      if (skip !== undefined && (await skip(req)))
        return { action: 'next', headers: NO_HEADERS, decision: undefined };
      // No identity is no licence: a client that resets its connection leaves no address to count it by.
      const identity = await identify(req);
      if (!identity && rejectUnidentified) return REFUSED_UNIDENTIFIED;
      const chosen = select === undefined ? limiter : await select(req);
      const units = typeof cost === 'number' ? cost : await cost(req);
      // Timed only when someone listens, so an unobserved gate pays nothing for it.
      const started = onDecision === undefined ? 0 : performance.now();
      const identifier = identity || UNKNOWN_IDENTITY;
      const decision = await chosen.consume(identifier, { cost: units });
      if (onDecision !== undefined) {
        const event = { scope: chosen.scope, decision, latencyMs: performance.now() - started, shadow };
        notify(onDecision, event, req, logger);
      }
      const headers = style === false ? NO_HEADERS : rateLimitHeaders(decision, style);
      if (decision.allowed) {
        const spent = { decision, limiter: chosen, identity: identifier, cost: units, req };
        const complete = completion(spent, refunds, logger);
        return complete === undefined
          ? { action: 'next', headers, decision }
          : { action: 'next', headers, decision, complete };
      }
      // Shadow mode lets a denied request through: telling the client to wait would be a lie.
      if (shadow) return { action: 'next', headers: withoutRetryAfter(headers), decision };
      return { action: 'reject', headers, status, body, decision };
    } catch (error) {
      // Error first: pino reads its first argument as the object to log, console prints both either way.
      logger.error(error, '[tollgate] rate limiter failed; answering 500');
      return { action: 'fail', status: 500, body: FAILURE_BODY, error };
    }
  };
  return { limiter, logger, check };
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

/** The options that build a limiter: given a ready `limiter`, none of them may be. */
export const LIMITER_OPTIONS = [
  'policy',
  'requestsPerMinute',
  'capacity',
  'scope',
  'store',
  'failOpen',
  'blockMs',
] as const;

function resolveLimiter<Req, Res>(options: GateOptions<Req, Res>): Limiter {
  if (options.limiter !== undefined) {
    for (const conflicting of LIMITER_OPTIONS) {
      if (options[conflicting] !== undefined)
        throw configError(conflicting, 'cannot be combined with `limiter`');
    }
    if (typeof options.limiter?.consume !== 'function')
      throw configError('limiter', 'must come from createLimiter()');
    return options.limiter;
  }
  let policy = options.policy;
  if (policy === undefined) {
    const requestsPerMinute = nonNegativeInteger('requestsPerMinute', options.requestsPerMinute ?? 60);
    policy = tokenBucket({ requestsPerMinute, capacity: options.capacity ?? requestsPerMinute });
  } else if (options.requestsPerMinute !== undefined || options.capacity !== undefined) {
    throw configError('policy', 'cannot be combined with `requestsPerMinute` or `capacity`');
  }
  return createLimiter({
    policy,
    ...(options.store === undefined ? {} : { store: options.store }),
    ...(options.scope === undefined ? {} : { scope: options.scope }),
    ...(typeof options.cost === 'number' ? { cost: options.cost } : {}),
    ...(options.failOpen === undefined ? {} : { failOpen: options.failOpen }),
    ...(options.blockMs === undefined ? {} : { blockMs: options.blockMs }),
  });
}

function resolveCost<Req>(cost: GateOptions<Req>['cost']): number | ((req: Req) => number | Promise<number>) {
  if (cost === undefined) return 1;
  if (typeof cost === 'function') return cost;
  return positiveInteger('cost', cost);
}

function resolveHeaders(headers: GateOptions<unknown>['headers']): HeaderStyle | false {
  if (headers === undefined || headers === true) return 'draft-6';
  if (headers === false || HEADER_STYLES.includes(headers)) return headers;
  throw configError(
    'headers',
    `must be a boolean or one of ${HEADER_STYLES.map((s) => `'${s}'`).join(', ')}`,
    headers,
  );
}

function resolveBody(message: unknown): unknown {
  if (typeof message === 'string') return Object.freeze({ error: 'Too Many Requests', message });
  if (typeof message === 'object' && message !== null) return message;
  throw configError('message', 'must be a string or a JSON object', message);
}
