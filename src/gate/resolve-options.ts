// All of a gate's options, resolved and checked once at wire-up into the one record the gate runs on.

import { configError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { errorStatus, knownKeys, loggerOption, oneOf, optionalFunction } from '../core/validate.js';
import type { HeaderWriter } from '../decision/headers.js';
import { addressIdentity } from '../identity/address-identity.js';
import type { Identity } from '../identity/identity.js';
import type { Limiter } from '../limiter/limiter.js';
import { tierSelector } from '../limiter/tiers.js';
import type { Refunds } from './completion.js';
import {
  type DecisionEvent,
  type GateOptions,
  resolveBody,
  resolveCost,
  resolveHeaders,
  resolveLimiter,
  resolveRefunds,
} from './options.js';

/** What an adapter tells the gate of itself. */
export interface GateAdapter<Req> {
  readonly name: string;
  /** The client's address as the framework reports it; the gate turns it into the default identity. */
  readonly identifier: (req: Req) => Identity | Promise<Identity>;
  readonly options?: readonly string[];
  /** Options the adapter does not take, with what to write instead, over the other limiters' (`FOREIGN_OPTIONS`). */
  readonly elsewhere?: Readonly<Record<string, string>>;
}

/** The gate's options as the gate runs them: each checked, defaulted and turned into what it uses per request. */
export interface ResolvedGateOptions<Req, Res> {
  /** The adapter's name, as traces tell it. */
  readonly adapter: string;
  readonly limiter: Limiter;
  /** The tier's limiter for a request; undefined without `tiers`. */
  readonly select: ((req: Req) => Promise<Limiter>) | undefined;
  readonly identify: (req: Req) => Identity | Promise<Identity>;
  readonly rejectUnidentified: boolean;
  readonly onDecision: ((event: DecisionEvent, req: Req) => void) | undefined;
  readonly skip: ((req: Req) => boolean | Promise<boolean>) | undefined;
  readonly cost: number | ((req: Req) => number | Promise<number>);
  /** Undefined when the options ask for no header at all. */
  readonly headersOf: HeaderWriter | undefined;
  readonly status: number;
  readonly body: unknown;
  readonly partition: ((req: Req) => string | undefined) | undefined;
  readonly shadow: boolean;
  readonly logger: Logger;
  /** Undefined when no request is ever refunded. */
  readonly refunds: Refunds<Req, Res> | undefined;
  /** With neither skip, tiers nor a cost function, only the identity and the store may answer later. */
  readonly direct: boolean;
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
  'partition',
  'onDecision',
  'skipFailedRequests',
  'skipSuccessfulRequests',
  'requestWasSuccessful',
  'abortedRequestsFail',
];

const WINDOW = 'a fixed window is `policy: fixedWindow({ limit, windowMs })`';
/**
 * Other rate limiters' options (express-rate-limit, @fastify/rate-limit, rate-limiter-flexible) that people moving
 * over write, each with what says the same here.
 */
const FOREIGN_OPTIONS: Readonly<Record<string, string>> = {
  windowMs: WINDOW,
  limit: WINDOW,
  max: WINDOW,
  timeWindow: 'a fixed window is `policy: fixedWindow({ limit: max, windowMs: timeWindow })`',
  points: 'a fixed window is `policy: fixedWindow({ limit: points, windowMs: duration * 1000 })`',
  duration: 'a fixed window is `policy: fixedWindow({ limit: points, windowMs: duration * 1000 })`',
  keyGenerator: 'the client is `identifier: (req) => string`',
  standardHeaders: "the header fields are `headers: 'draft-6' | 'draft-7' | 'draft-8' | 'draft-10'`",
  allowList: 'requests let through uncounted are `skip: (req) => boolean`',
  ban: 'a lockout after denials is `blockMs`',
  blockDuration: 'a lockout after denials is `blockMs`',
  errorResponseBuilder: 'the rejection is `message`, `statusCode` or `handler`',
  addHeaders: 'the header fields are `headers` and `legacyHeaders`',
};

/** Every option the gate shares with the adapters, checked here and nowhere else, in the order they are reported. */
export function resolveGateOptions<Req, Res>(
  options: GateOptions<Req, Res>,
  adapter: GateAdapter<Req>,
): ResolvedGateOptions<Req, Res> {
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
  const partition = optionalFunction('partition', options.partition);
  const shadow = options.shadow ?? false;
  if (typeof shadow !== 'boolean') throw configError('shadow', 'must be a boolean', shadow);
  const logger = loggerOption(options.logger, console);
  const refunds = resolveRefunds(options);
  const direct = skip === undefined && select === undefined && typeof cost === 'number';
  return {
    adapter: adapter.name,
    limiter,
    select,
    identify,
    rejectUnidentified,
    onDecision,
    skip,
    cost,
    headersOf,
    status,
    body,
    partition,
    shadow,
    logger,
    refunds,
    direct,
  };
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
