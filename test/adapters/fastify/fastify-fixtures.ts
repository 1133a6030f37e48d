// The apps, limiter and figures the Fastify idiom tests share: every figure exact on a fixed clock.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { RateLimitInfo } from '../../../src/decision/rate-limit-info.js';
import { createLimiter } from '../../../src/limiter/limiter.js';
import { tokenBucket } from '../../../src/policies/token-bucket.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import { CLIENT } from '../../../src/testing/adapter-contract.js';

export const T0 = Date.UTC(2030, 0, 1);
export const CAPACITY = 2;
/** The body the plugin answers a rejection with itself. */
export const REJECTION = {
  error: 'Too Many Requests',
  message: 'Too many requests, please try again later.',
};

/** Two units, one back per second, on a clock fixed at T0: every figure is exact. */
export function bucket(store = new MemoryStore({ clock: () => T0, autoCleanup: false })) {
  return createLimiter({ policy: tokenBucket({ capacity: CAPACITY, refillPerSecond: 1 }), store });
}

/** What request.rateLimit says after the n-th request from `key` (admitted while n <= CAPACITY). */
export function nth(n: number, key = CLIENT) {
  const used = Math.min(n, CAPACITY);
  const resetTime = new Date(T0 + used * 1000);
  return { limit: CAPACITY, used, remaining: CAPACITY - used, resetTime, key, allowed: n <= CAPACITY };
}

/** The figures a test compares, the decision standing for itself by its verdict. */
export function readable(info: RateLimitInfo | undefined) {
  if (info === undefined) return undefined;
  const { limit, used, remaining, resetTime, key, decision } = info;
  return { limit, used, remaining, resetTime, key, allowed: decision.allowed };
}

/** An app closed when the test ends. */
export function app(
  t: { after(fn: () => Promise<void>): void },
  options: { loggerInstance?: FastifyBaseLogger; genReqId?: () => string } = {},
) {
  const fastify = Fastify(options);
  t.after(() => fastify.close());
  return fastify;
}

/** The statuses of `count` requests in a row. */
export async function statuses(fastify: FastifyInstance, url: string, count: number, headers = {}) {
  const result = [];
  for (let i = 0; i < count; i++) result.push((await fastify.inject({ url, headers })).statusCode);
  return result;
}

/** Matches the configuration error that names `option`. */
export function isConfigError(option: string) {
  return (error: { code?: unknown; option?: unknown }) =>
    error.code === 'ERR_TOLLGATE_CONFIG' && error.option === option;
}
