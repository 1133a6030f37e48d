// The gate's options: what every adapter accepts, and how each is turned, once at wire-up, into what the gate uses
// (resolve-options.ts puts them together, in the order they are checked).

import type { Duration } from '../core/duration.js';
import { configError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { nonNegativeInteger, optionalFunction, positiveInteger } from '../core/validate.js';
import type { Decision } from '../decision/decision.js';
import {
  HEADER_STYLES,
  type HeaderStyle,
  type HeaderWriter,
  headerWriter,
  LEGACY_RESETS,
  type LegacyReset,
} from '../decision/headers.js';
import type { Identity } from '../identity/identity.js';
import { createLimiter, type Limiter, type LimiterOptions } from '../limiter/limiter.js';
import type { Tiers } from '../limiter/tiers.js';
import { tokenBucket } from '../policies/token-bucket.js';
import type { Store } from '../stores/store.js';
import type { Refunds, ResponseRefundOptions } from './completion.js';

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
export interface GateOptions<Req, Res = unknown> extends ResponseRefundOptions<Req, Res> {
  /** Sustained rate of the default token bucket. Default 60. 0 rejects everything. */
  readonly requestsPerMinute?: number;
  /** Burst size of the default token bucket. Default `requestsPerMinute`. */
  readonly capacity?: number;
  /** Any policy (or several) instead of the default token bucket. */
  readonly policy?: LimiterOptions['policy'];
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
  /** The standard fields: `true` (= 'draft-6'), `false`, or a header style. Default true. */
  readonly headers?: boolean | HeaderStyle;
  /** `X-RateLimit-Limit/Remaining/Reset`, on or off of its own. Default: on with 'draft-6', off otherwise. */
  readonly legacyHeaders?: boolean;
  /** `X-RateLimit-Reset` as an ISO-8601 instant or in epoch seconds. Default 'iso-8601'. */
  readonly legacyReset?: LegacyReset;
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
  /**
   * The partition of an adaptive limit's `partitions` a request is counted in, e.g. `(req) => req.headers['x-priority']`;
   * none (or one not configured) only borrows what the partitions leave unused.
   */
  readonly partition?: (req: Req) => string | undefined;
  /** Chooses the limiter per request; requests without a tier use the gate's own limiter. */
  readonly tiers?: Tiers<Req>;
  /**
   * Called after every decision, those on the shared `unknown` bucket included (a skipped request, or one refused
   * by `unidentified: 'reject'`, has none). Its errors are logged, not thrown.
   */
  readonly onDecision?: (event: DecisionEvent, req: Req) => void;
}

/** The options that build a limiter: given a ready `limiter`, none of them may be. */
const LIMITER_OPTIONS = [
  'policy',
  'requestsPerMinute',
  'capacity',
  'scope',
  'store',
  'failOpen',
  'blockMs',
] as const;

/**
 * A route's options over its app's (a Fastify route config, a NestJS @RateLimit). Without limiter options of its
 * own the route spends from the app's limiter; with them it gets its own limiter (and buckets), still on the app's
 * store and fail mode.
 */
export function overApp<Options extends GateOptions<never, never>>(
  app: Options,
  route: Options,
  shared: Limiter,
): Options {
  const {
    limiter,
    policy,
    requestsPerMinute,
    capacity,
    scope,
    store,
    failOpen,
    blockMs,
    tiers,
    ...perRequest
  } = app;
  // A route that sets none of the limiter's options (nor a limiter) shares the app's buckets, and its tiers.
  if (route.limiter === undefined && !LIMITER_OPTIONS.some((option) => route[option] !== undefined))
    return { ...perRequest, ...(tiers === undefined ? {} : { tiers }), ...route, limiter: shared };
  // A limit of its own is the route's alone: the app's tiers would send their clients to the app's buckets.
  if (route.limiter !== undefined) return { ...perRequest, ...route };
  return { ...perRequest, store: shared.store, ...(failOpen === undefined ? {} : { failOpen }), ...route };
}

export function resolveLimiter<Req, Res>(options: GateOptions<Req, Res>): Limiter {
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

export function resolveCost<Req>(
  cost: GateOptions<Req>['cost'],
): number | ((req: Req) => number | Promise<number>) {
  if (cost === undefined) return 1;
  if (typeof cost === 'function') return cost;
  return positiveInteger('cost', cost);
}

/** The header writer the options ask for; undefined when they ask for no header at all. */
export function resolveHeaders(
  options: Pick<GateOptions<unknown>, 'headers' | 'legacyHeaders' | 'legacyReset'>,
): HeaderWriter | undefined {
  const { headers = true, legacyHeaders, legacyReset = 'iso-8601' } = options;
  const style = headers === true ? 'draft-6' : headers;
  if (style !== false && !HEADER_STYLES.includes(style))
    throw configError('headers', `must be a boolean or one of ${quoted(HEADER_STYLES)}`, headers);
  if (legacyHeaders !== undefined && typeof legacyHeaders !== 'boolean')
    throw configError('legacyHeaders', 'must be a boolean', legacyHeaders);
  if (!LEGACY_RESETS.includes(legacyReset))
    throw configError('legacyReset', `must be one of ${quoted(LEGACY_RESETS)}`, legacyReset);
  // The legacy set came with 'draft-6' before it could be chosen on its own: the default keeps that.
  return headerWriter(style, (legacyHeaders ?? style === 'draft-6') && legacyReset);
}

function quoted(values: readonly string[]): string {
  return values.map((value) => `'${value}'`).join(', ');
}

export function resolveBody(message: unknown): unknown {
  if (typeof message === 'string') return Object.freeze({ error: 'Too Many Requests', message });
  if (typeof message === 'object' && message !== null) return message;
  throw configError('message', 'must be a string or a JSON object', message);
}

/** The refund options, checked at wire-up; undefined when no request is ever refunded. */
export function resolveRefunds<Req, Res>(
  options: ResponseRefundOptions<Req, Res>,
): Refunds<Req, Res> | undefined {
  const failed = flag('skipFailedRequests', options.skipFailedRequests);
  const succeeded = flag('skipSuccessfulRequests', options.skipSuccessfulRequests);
  const wasSuccessful = optionalFunction('requestWasSuccessful', options.requestWasSuccessful);
  const abortsFail = flag('abortedRequestsFail', options.abortedRequestsFail);
  // Refunding every request would leave the limit counting only the requests in flight: concurrency() says that.
  if (failed && succeeded)
    throw configError(
      'skipSuccessfulRequests',
      'cannot be combined with `skipFailedRequests`: together they refund every request (to limit requests ' +
        'in flight, use the concurrency() policy)',
    );
  // An abort is counted under skipSuccessfulRequests either way: the option would change nothing there.
  if (abortsFail && !failed)
    throw configError('abortedRequestsFail', 'needs `skipFailedRequests`, whose refunds it changes');
  if (failed || succeeded) return { succeeded, wasSuccessful, abortsFail };
  if (wasSuccessful !== undefined)
    throw configError('requestWasSuccessful', 'needs `skipFailedRequests` or `skipSuccessfulRequests`');
  return undefined;
}

function flag(option: string, value: unknown): boolean {
  if (value !== undefined && typeof value !== 'boolean')
    throw configError(option, 'must be a boolean', value);
  return value ?? false;
}
