// express-rate-limit 8's public types, as its own declarations name them, so code typed against it compiles unchanged.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Store as TollgateStore } from '../../../stores/store.js';

/** A value the middleware asks of each request: sync or async. */
export type ValueDeterminingMiddleware<T> = (request: Request, response: Response) => T | Promise<T>;

export type LoggerFn = (error: unknown, message?: string) => void;
/** What the middleware reports through: console by default, pino and winston fit. */
export type Logger = { error: LoggerFn; warn: LoggerFn };

export type RateLimitExceededEventHandler = (
  request: Request,
  response: Response,
  next: NextFunction,
  optionsUsed: Options,
) => void;
export type RateLimitReachedEventHandler = (
  request: Request,
  response: Response,
  optionsUsed: Options,
) => void;

/** A client's hits in its window, and when the window ends (a store may not know). */
export type ClientRateLimitInfo = { totalHits: number; resetTime: Date | undefined };
export type IncrementResponse = ClientRateLimitInfo;
export type IncrementCallback = (
  error: Error | undefined,
  totalHits: number,
  resetTime: Date | undefined,
) => void;

/** The middleware, with a client's count to read and to forget. */
export type RateLimitRequestHandler = RequestHandler & {
  resetKey: (key: string) => void;
  getKey: (key: string) => Promise<ClientRateLimitInfo | undefined> | ClientRateLimitInfo | undefined;
};

/** A store of express-rate-limit 5 and older, with a callback: still accepted. */
export type LegacyStore = {
  incr: (key: string, callback: IncrementCallback) => void;
  decrement: (key: string) => void;
  resetKey: (key: string) => void;
  resetAll?: () => void;
};

/** The store interface every express-rate-limit store implements (rate-limit-redis, rate-limit-postgresql...). */
export type Store = {
  init?: (options: Options) => void | Promise<void>;
  get?: (key: string) => Promise<ClientRateLimitInfo | undefined> | ClientRateLimitInfo | undefined;
  increment: (key: string) => Promise<IncrementResponse> | IncrementResponse;
  decrement: (key: string) => Promise<void> | void;
  resetKey: (key: string) => Promise<void> | void;
  resetAll?: () => Promise<void> | void;
  shutdown?: () => Promise<void> | void;
  /** True when no other store instance can see this one's keys (a memory store). */
  localKeys?: boolean;
  prefix?: string;
};

export type DraftHeadersVersion = 'draft-6' | 'draft-7' | 'draft-8';

/** The checks `validate` switches, by name (each is one of `CHECKS` in validations.ts). */
export type ValidationName =
  | 'ip'
  | 'trustProxy'
  | 'xForwardedForHeader'
  | 'forwardedHeader'
  | 'positiveHits'
  | 'unsharedStore'
  | 'singleCount'
  | 'limit'
  | 'draftPolliHeaders'
  | 'onLimitReached'
  | 'headersDraftVersion'
  | 'headersResetTime'
  | 'knownOptions'
  | 'validationsConfig'
  | 'creationStack'
  | 'ipv6Subnet'
  | 'ipv6SubnetOrKeyGenerator'
  | 'keyGeneratorIpFallback'
  | 'windowMs';

/** `default` stands for every check not named. */
export type EnabledValidations = { [key in ValidationName | 'default']?: boolean };

export type Options = {
  windowMs: number;
  limit: number | ValueDeterminingMiddleware<number>;
  // biome-ignore lint/suspicious/noExplicitAny: anything res.send takes
  message: any | ValueDeterminingMiddleware<any>;
  statusCode: number;
  legacyHeaders: boolean;
  standardHeaders: boolean | DraftHeadersVersion;
  identifier: string | ValueDeterminingMiddleware<string>;
  retryAfter?: number | ValueDeterminingMiddleware<number>;
  requestPropertyName: string;
  skipFailedRequests: boolean;
  skipSuccessfulRequests: boolean;
  keyGenerator: ValueDeterminingMiddleware<string>;
  ipv6Subnet: 64 | 60 | 56 | 52 | 50 | 48 | 32 | number | ValueDeterminingMiddleware<number> | false;
  handler: RateLimitExceededEventHandler;
  skip: ValueDeterminingMiddleware<boolean>;
  requestWasSuccessful: ValueDeterminingMiddleware<boolean>;
  /** Any express-rate-limit store, or a Tollgate store (RedisStore, MemoryStore) counting under the prefix 'erl'. */
  store: Store | LegacyStore | TollgateStore;
  validate: boolean | EnabledValidations;
  /** express-rate-limit 6's name of `legacyHeaders`. */
  headers?: boolean;
  /** The older name of `limit`. */
  max?: number | ValueDeterminingMiddleware<number>;
  passOnStoreError: boolean;
  logger: Logger;
};

/** The figures set on the request (`req.rateLimit`, or `requestPropertyName`). */
export type RateLimitInfo = {
  limit: number;
  used: number;
  remaining: number;
  resetTime: Date | undefined;
  key: string;
};

export type AugmentedRequest = Request & { [key: string]: RateLimitInfo };

export type Client = { totalHits: number; resetTime: Date };
