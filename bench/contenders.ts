// Every contender behind one small interface: Tollgate's stores and policies, and the peers' memory and Redis stores.
import { MemoryStore as ErlMemoryStore, type Options as ErlOptions } from 'express-rate-limit';
import { RedisStore as RateLimitRedisStore, type RedisReply } from 'rate-limit-redis';
import { type IRateLimiterStoreOptions, RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import {
  type AnyPolicy,
  createLimiter,
  type Decision,
  fixedWindow,
  MemoryStore,
  slidingWindow,
  slidingWindowCounter,
  tokenBucket,
} from '../src/index.js';
import {
  type RedisClientLike,
  RedisStore,
  type RedisStoreMetrics,
  type RedisStoreOptions,
} from '../src/stores/redis/index.js';
import type { Decider } from './load.js';
import type { BenchRedis } from './redis.js';

type Library = 'Tollgate' | 'express-rate-limit' | 'rate-limit-redis' | 'rate-limiter-flexible';
type Engine = 'memory' | 'redis';
export type ClientLibrary = 'ioredis' | 'node-redis';

export interface Contender {
  readonly library: Library;
  readonly engine: Engine;
  readonly client?: ClientLibrary;
  /** Tollgate's policy kind; the peers are all fixed-window counters. */
  readonly policy: string;
  /** A variant of the library's defaults, named in the tables (e.g. rate-limiter-flexible's in-memory block). */
  readonly variant?: string;
  open(): Promise<Opened>;
}

export interface Opened extends Decider {
  /** Tollgate on Redis: the store's live counters (its engine calls and the decisions they carried, degraded ones). */
  readonly metrics?: RedisStoreMetrics;
  close(): Promise<void>;
}

/** Where Redis contenders get their shared client: the bench's one server, or its cluster. */
export interface RedisClients {
  ioredis(): Promise<RedisClientLike>;
  nodeRedis(): Promise<RedisClientLike>;
}

/** A quota and its window, given to every library in its own terms. */
export interface Quota {
  readonly limit: number;
  readonly windowMs: number;
}

export const TOLLGATE_POLICIES = [
  'token-bucket',
  'fixed-window',
  'sliding-window-counter',
  'sliding-window',
] as const;
export type TollgatePolicy = (typeof TOLLGATE_POLICIES)[number];

/**
 * Each policy at `quota`. The token bucket refills the whole quota over the window; the sliding window log keeps one
 * entry per admitted request, so its state (and cost) grows with each client's rate within the window.
 */
export function policyOf(kind: TollgatePolicy, { limit, windowMs }: Quota): AnyPolicy {
  switch (kind) {
    case 'token-bucket':
      return tokenBucket({ capacity: limit, refillPerSecond: (limit * 1000) / windowMs });
    case 'fixed-window':
      return fixedWindow({ limit, windowMs });
    case 'sliding-window-counter':
      return slidingWindowCounter({ limit, windowMs });
    case 'sliding-window':
      return slidingWindow({ limit, windowMs });
  }
}

const clientOf = (redis: RedisClients, client: ClientLibrary) =>
  client === 'ioredis' ? redis.ioredis() : redis.nodeRedis();

const decisionAllowed = (outcome: unknown) => (outcome as Decision).allowed;

export function tollgateMemory(kind: TollgatePolicy, quota: Quota, maxBuckets?: number): Contender {
  return {
    library: 'Tollgate',
    engine: 'memory',
    policy: kind,
    async open() {
      const store = new MemoryStore(maxBuckets === undefined ? {} : { maxBuckets });
      const limiter = createLimiter({ policy: policyOf(kind, quota), store });
      return {
        decide: (key) => limiter.consume(key),
        allowed: decisionAllowed,
        close: async () => store.close(),
      };
    },
  };
}

export function tollgateRedis(
  redis: RedisClients,
  client: ClientLibrary,
  kind: TollgatePolicy,
  quota: Quota,
  variant?: { readonly name: string; readonly options: Partial<RedisStoreOptions> },
): Contender {
  return {
    library: 'Tollgate',
    engine: 'redis',
    client,
    policy: kind,
    ...(variant === undefined ? {} : { variant: variant.name }),
    async open() {
      // A variant that says where to connect (`rootNodes`) is the store's own connection; others share the bench's.
      const own = variant?.options.rootNodes !== undefined;
      // A generous timeout: on a loaded machine a slow answer must not become a fail-open decision that costs
      // Redis nothing and would be counted as a fast one.
      const store = new RedisStore({
        ...(own ? {} : { client: await clientOf(redis, client) }),
        commandTimeoutMs: 2000,
        ...variant?.options,
      });
      // Connected before traffic, or the first decisions would answer in the fail mode.
      if (own) await store.connect();
      const limiter = createLimiter({ policy: policyOf(kind, quota), store });
      return {
        decide: (key) => limiter.consume(key),
        allowed: decisionAllowed,
        metrics: store.metrics,
        close: () => store.close(),
      };
    },
  };
}

export function expressRateLimitMemory(quota: Quota): Contender {
  return {
    library: 'express-rate-limit',
    engine: 'memory',
    policy: 'fixed-window',
    async open() {
      const store = new ErlMemoryStore();
      store.init({ windowMs: quota.windowMs } as ErlOptions);
      return {
        decide: (key) => store.increment(key),
        allowed: (outcome) => (outcome as { totalHits: number }).totalHits <= quota.limit,
        close: async () => store.shutdown(),
      };
    },
  };
}

export function rateLimitRedis(redis: BenchRedis, client: ClientLibrary, quota: Quota): Contender {
  return {
    library: 'rate-limit-redis',
    engine: 'redis',
    client,
    policy: 'fixed-window',
    async open() {
      // Each client library wired as rate-limit-redis's README shows.
      const sendCommand =
        client === 'ioredis'
          ? await redis.ioredis().then(
              (c) =>
                (command: string, ...args: string[]) =>
                  c.call(command, ...args) as Promise<RedisReply>,
            )
          : await redis.nodeRedis().then(
              (c) =>
                (...args: string[]) =>
                  c.sendCommand(args) as Promise<RedisReply>,
            );
      const store = new RateLimitRedisStore({ sendCommand });
      await store.init({ windowMs: quota.windowMs } as ErlOptions);
      return {
        decide: (key) => store.increment(key),
        allowed: (outcome) => (outcome as { totalHits: number }).totalHits <= quota.limit,
        close: async () => {},
      };
    },
  };
}

/** rate-limiter-flexible resolves only when it allows; a denial rejects with a RateLimiterRes, which the load counts. */
const flexibleAllowed = () => true;

export function flexibleMemory(quota: Quota): Contender {
  return {
    library: 'rate-limiter-flexible',
    engine: 'memory',
    policy: 'fixed-window',
    async open() {
      const limiter = new RateLimiterMemory({ points: quota.limit, duration: quota.windowMs / 1000 });
      return { decide: (key) => limiter.consume(key), allowed: flexibleAllowed, close: async () => {} };
    },
  };
}

export function flexibleRedis(
  redis: RedisClients,
  client: ClientLibrary,
  quota: Quota,
  variant?: { readonly name: string; readonly options: Partial<IRateLimiterStoreOptions> },
): Contender {
  return {
    library: 'rate-limiter-flexible',
    engine: 'redis',
    client,
    policy: 'fixed-window',
    ...(variant === undefined ? {} : { variant: variant.name }),
    async open() {
      const limiter = new RateLimiterRedis({
        storeClient: await clientOf(redis, client),
        points: quota.limit,
        duration: quota.windowMs / 1000,
        ...(client === 'node-redis' ? { useRedisPackage: true } : {}),
        ...variant?.options,
      });
      return { decide: (key) => limiter.consume(key), allowed: flexibleAllowed, close: async () => {} };
    },
  };
}

/** "Tollgate token-bucket", "rate-limit-redis", "rate-limiter-flexible (in-memory block)". */
export function label(contender: Contender): string {
  const name = contender.library === 'Tollgate' ? `Tollgate ${contender.policy}` : contender.library;
  return contender.variant === undefined ? name : `${name} (${contender.variant})`;
}
