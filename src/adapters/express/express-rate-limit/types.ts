// express-rate-limit 8's options as Tollgate's Express middleware takes them, and what its `handler` is given.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Duration } from '../../../core/duration.js';
import type { Logger } from '../../../core/logger.js';
import type { DecisionEvent } from '../../../gate/options.js';
import type { Store } from '../../../stores/store.js';

/** A value, or a function of the request and its response returning one (sync or async), as erl takes them. */
export type ValueOrFunction<T> = T | ((req: Request, res: Response) => T | Promise<T>);

export type DraftVersion = 'draft-6' | 'draft-7' | 'draft-8';

/** express-rate-limit 8's validation names: `validate` takes them, though only `xForwardedForHeader` has a twin. */
export const VALIDATIONS = [
  'default',
  'ip',
  'trustProxy',
  'xForwardedForHeader',
  'forwardedHeader',
  'positiveHits',
  'unsharedStore',
  'singleCount',
  'limit',
  'draftPolliHeaders',
  'onLimitReached',
  'headersDraftVersion',
  'headersResetTime',
  'knownOptions',
  'validationsConfig',
  'creationStack',
  'ipv6Subnet',
  'ipv6SubnetOrKeyGenerator',
  'keyGeneratorIpFallback',
  'windowMs',
] as const;

/** express-rate-limit 8's options with its meaning, plus Tollgate's `scope`; `store` must be a Tollgate store. */
export interface ExpressRateLimitCompatOptions {
  /** The window, anchored at the client's first request in it: ms, or a duration such as '15m'. Default 60000. */
  readonly windowMs?: Duration;
  /**
   * Requests per window, or a function of the request giving them. Default 5. At most 2^51 / `windowMs` (868749 for
   * 30 days): the hits of a window are counted up to that.
   */
  readonly limit?: ValueOrFunction<number>;
  /** express-rate-limit's older name of `limit` (`limit` wins when both are given). */
  readonly max?: ValueOrFunction<number>;
  /** The rejection's body, sent with `res.send` (a string as is, an object as JSON). */
  readonly message?: ValueOrFunction<unknown>;
  /** Default 429. */
  readonly statusCode?: number;
  readonly handler?: (
    req: Request,
    res: Response,
    next: NextFunction,
    options: ExpressRateLimitResolvedOptions,
  ) => unknown;
  /** `X-RateLimit-Limit/Remaining/Reset`, the reset in epoch seconds. Default true. */
  readonly legacyHeaders?: boolean;
  /** The IETF draft's fields: `true` is 'draft-6'. Default false. */
  readonly standardHeaders?: boolean | DraftVersion;
  /** The policy's name in draft-8's fields. Default `<limit>-in-<window>`, such as `100-in-15min`. */
  readonly identifier?: ValueOrFunction<string>;
  /** `Retry-After` on a rejection, in seconds, instead of the wait until the window ends. */
  readonly retryAfter?: ValueOrFunction<number>;
  /** Where the figures go on the request. Default 'rateLimit'. */
  readonly requestPropertyName?: string;
  readonly skip?: (req: Request, res: Response) => boolean | Promise<boolean>;
  readonly skipFailedRequests?: boolean;
  readonly skipSuccessfulRequests?: boolean;
  readonly requestWasSuccessful?: (req: Request, res: Response) => boolean | Promise<boolean>;
  /** The client's key. Default: its address, IPv6 grouped by `ipv6Subnet`. */
  readonly keyGenerator?: (req: Request, res: Response) => string | Promise<string>;
  /** The prefix length IPv6 clients are grouped by; false: each address alone. Default 56. */
  readonly ipv6Subnet?: number | false | ((req: Request, res: Response) => number | Promise<number>);
  /** A Tollgate store (MemoryStore, RedisStore). Default: a MemoryStore of this limiter's own. */
  readonly store?: Store;
  /** While the store is unreachable: let requests through (true) or hand the error to Express (false, default). */
  readonly passOnStoreError?: boolean;
  /** false, or `{ xForwardedForHeader: false }`, silences the trust-proxy warning; other names are accepted. */
  readonly validate?: boolean | Readonly<Partial<Record<(typeof VALIDATIONS)[number], boolean>>>;
  readonly logger?: Logger;
  /** Tollgate's bucket namespace: needed when several such limiters share one `store`. */
  readonly scope?: string;
  /** Tollgate's observer (`tollgate/metrics`, `tollgate/otel`), told each decision as this style made it. */
  readonly onDecision?: (event: DecisionEvent, req: Request) => void;
}

/** The keys only express-rate-limit has: any of them reads the options with its meaning. */
export const EXPRESS_RATE_LIMIT_KEYS = [
  'windowMs',
  'limit',
  'max',
  'standardHeaders',
  'keyGenerator',
  'ipv6Subnet',
  'requestPropertyName',
  'passOnStoreError',
  'retryAfter',
  'validate',
] as const;

type ExpressRateLimitKey = (typeof EXPRESS_RATE_LIMIT_KEYS)[number];

/**
 * None of those keys: Tollgate's own options say so, so that TypeScript types a call with one of them (and its
 * callbacks' parameters) by express-rate-limit's options.
 */
export type WithoutExpressRateLimitKeys = { readonly [K in ExpressRateLimitKey]?: never };

/** What `handler` gets as its fourth argument: the options with express-rate-limit's defaults filled in. */
export interface ExpressRateLimitResolvedOptions extends ExpressRateLimitCompatOptions {
  /** In ms, a duration string read. */
  readonly windowMs: number;
  readonly limit: ValueOrFunction<number>;
  readonly message: ValueOrFunction<unknown>;
  readonly statusCode: number;
  readonly legacyHeaders: boolean;
  readonly standardHeaders: false | DraftVersion;
  readonly requestPropertyName: string;
  readonly skipFailedRequests: boolean;
  readonly skipSuccessfulRequests: boolean;
  readonly passOnStoreError: boolean;
}

/** The middleware, with express-rate-limit's instance methods. */
export interface ExpressRateLimitHandler extends RequestHandler {
  /** Forgets a client's count, so its next request starts a fresh window. */
  resetKey(key: string): Promise<void>;
  /** A client's hits in its current window and when that ends; undefined when it has none. */
  getKey(key: string): Promise<{ totalHits: number; resetTime: Date } | undefined>;
}
