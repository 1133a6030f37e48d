// @fastify/rate-limit's option and store types, as its plugin takes them.
import type { FastifyRequest, RouteOptions } from 'fastify';

/** What a rejection's builder is told. */
export interface ErrorResponseBuilderContext {
  /** 429, or 403 once the client is banned. */
  statusCode: number;
  ban: boolean;
  /** The wait in words: '1 minute'. */
  after: string;
  max: number;
  /** The wait in ms. */
  ttl: number;
}

/** A store's answer: the hits of the window so far (this one included) and the ms until it ends. */
export interface RateLimitStoreResult {
  current: number;
  ttl: number;
}

/** A store's callback, Node style. */
export type RateLimitStoreCallback = (error: Error | null, result?: RateLimitStoreResult) => void;

/** The options a route's store is made for: the route's merged options, and the route in `routeInfo`. */
export type RateLimitRouteParams = ResolvedRateLimitParams & {
  routeInfo: Partial<RouteOptions> & { path?: string; prefix?: string };
};

/** The store contract: count a hit per key, read one (for `{ increment: false }`), and a store per route. */
export interface FastifyRateLimitStore {
  incr(key: string, callback: RateLimitStoreCallback, timeWindow: number, max: number): void;
  read?(key: string, callback: RateLimitStoreCallback, timeWindow: number, max: number): void;
  child(routeOptions: RateLimitRouteParams): FastifyRateLimitStore;
}

/** A store class: made once per plugin registration, with the plugin's resolved options. */
export type FastifyRateLimitStoreCtor = new (options: ResolvedRateLimitParams) => FastifyRateLimitStore;

/** A value, or a function of the request and its key giving one (sync or async). */
type PerRequest<T> = T | ((req: FastifyRequest, key: string) => T | Promise<T>);

export interface CreateRateLimitOptions {
  /** A store class of the plugin's contract, or a Tollgate store (MemoryStore, RedisStore) to count in. */
  store?: FastifyRateLimitStoreCtor | object;
  skipOnError?: boolean;
  max?: PerRequest<number>;
  timeWindow?: string | PerRequest<number>;
  allowList?: string[] | ((req: FastifyRequest, key: string) => boolean | Promise<boolean>);
  keyGenerator?: (req: FastifyRequest) => string | number | Promise<string | number>;
  ipv6Subnet?: number;
  ban?: number;
}

export type RateLimitHook = 'onRequest' | 'preParsing' | 'preValidation' | 'preHandler';

export interface RateLimitOptions extends CreateRateLimitOptions {
  hook?: RateLimitHook;
  cache?: number;
  continueExceeding?: boolean;
  onBanReach?: (req: FastifyRequest, key: string) => void;
  groupId?: string;
  errorResponseBuilder?: (req: FastifyRequest, context: ErrorResponseBuilderContext) => object;
  enableDraftSpec?: boolean;
  onExceeding?: (req: FastifyRequest, key: string) => void;
  onExceeded?: (req: FastifyRequest, key: string) => void;
  exponentialBackoff?: boolean;
}

/** Header names the plugin may set, each on unless turned off. */
export type RateLimitHeaderToggles = Partial<
  Record<'x-ratelimit-limit' | 'x-ratelimit-remaining' | 'x-ratelimit-reset' | 'retry-after', boolean>
> &
  Partial<Record<'ratelimit-limit' | 'ratelimit-remaining' | 'ratelimit-reset', boolean>>;

export interface RateLimitPluginOptions extends RateLimitOptions {
  global?: boolean;
  /** An ioredis client: counts in Redis under `nameSpace`, as the plugin's own Redis store does. */
  redis?: unknown;
  nameSpace?: string;
  addHeaders?: RateLimitHeaderToggles;
  addHeadersOnExceeding?: RateLimitHeaderToggles;
}

/** The header names in use: the X-RateLimit ones, or the draft specification's. */
export interface RateLimitLabels {
  rateLimit: string;
  rateRemaining: string;
  rateReset: string;
  retryAfter: string;
}

type Callback = (req: FastifyRequest, key: string) => unknown;

/** The options resolved as the plugin resolves them, and as a store class's constructor receives them. */
export interface ResolvedRateLimitParams {
  global: boolean;
  enableDraftSpec: boolean;
  labels: RateLimitLabels;
  addHeaders: Record<string, boolean | undefined>;
  addHeadersOnExceeding: Record<string, boolean | undefined>;
  max: PerRequest<number>;
  timeWindow: PerRequest<number>;
  hook: RateLimitHook;
  allowList: RateLimitOptions['allowList'] | null;
  ban: number;
  onBanReach: Callback;
  onExceeding: Callback;
  onExceeded: Callback;
  continueExceeding: boolean;
  exponentialBackoff: boolean;
  ipv6Subnet: number;
  keyGenerator: (req: FastifyRequest, ipv6Subnet?: number) => unknown;
  errorResponseBuilder: (req: FastifyRequest, context: ErrorResponseBuilderContext) => unknown;
  isCustomErrorMessage: boolean;
  skipOnError: boolean;
  groupId?: string;
  cache?: number;
}

/** What a limiter made by `fastify.createRateLimit()` answers. */
export type RateLimitCheck =
  | { isAllowed: true; key: string }
  | {
      isAllowed: false;
      key: string;
      max: number;
      timeWindow: number;
      remaining: number;
      ttl: number;
      ttlInSeconds: number;
      isExceeded: boolean;
      isBanned: boolean;
    };
