// One limit of the plugin: key the request, count it in the store, then let it on with headers or reject it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { configError } from '../../../core/errors.js';
import { defaultKeyGenerator, waitText } from './options.js';
import type {
  FastifyRateLimitStore,
  RateLimitCheck,
  RateLimitStoreResult,
  ResolvedRateLimitParams,
} from './types.js';

/** A limit: its options, its store, and the request mark its registration shares (one limit per request). */
export interface Limit {
  readonly params: ResolvedRateLimitParams;
  readonly store: FastifyRateLimitStore;
  readonly ran: symbol;
}

/** The hook a limit runs as, in whichever lifecycle stage it is placed. */
export type RateLimitHandler = (
  req: FastifyRequest,
  reply: FastifyReply,
) => Promise<FastifyReply | undefined>;

/** Checks a request (and counts it, unless `increment` is false): what `fastify.createRateLimit()` answers. */
export async function checkLimit(
  { params, store }: Limit,
  req: FastifyRequest,
  callOptions?: { increment?: boolean },
): Promise<RateLimitCheck> {
  const generated =
    params.keyGenerator === defaultKeyGenerator
      ? defaultKeyGenerator(req, params.ipv6Subnet)
      : await params.keyGenerator(req);
  // The route's own group, wherever the limit came from, joined to the key. A key the app gave as a number stays
  // one without a group: the callbacks and the store get it as given.
  const groupId = (req.routeOptions.config as { rateLimit?: { groupId?: string } } | undefined)?.rateLimit
    ?.groupId;
  const key = (groupId ? `${generated}${groupId}` : generated) as string;
  if (await allowed(params, req, key)) return { isAllowed: true, key };
  const max = typeof params.max === 'number' ? params.max : await params.max(req, key);
  const timeWindow =
    typeof params.timeWindow === 'number' ? params.timeWindow : await params.timeWindow(req, key);
  const counted = await count(store, callOptions?.increment === false, key, timeWindow, max).catch(
    (error: unknown) => {
      if (!params.skipOnError) throw error;
      return { current: 0, ttl: 0 };
    },
  );
  const { current, ttl } = counted;
  return {
    isAllowed: false,
    key,
    max,
    timeWindow,
    remaining: Math.max(0, max - current),
    ttl,
    ttlInSeconds: Math.ceil(ttl / 1000),
    isExceeded: current > max,
    isBanned: params.ban !== -1 && current - max > params.ban,
  };
}

async function allowed(params: ResolvedRateLimitParams, req: FastifyRequest, key: string): Promise<boolean> {
  const { allowList } = params;
  if (!allowList) return false;
  if (typeof allowList === 'function') return Boolean(await allowList(req, key));
  return allowList.indexOf(key) !== -1;
}

function count(
  store: FastifyRateLimitStore,
  readOnly: boolean,
  key: string,
  timeWindow: number,
  max: number,
): Promise<RateLimitStoreResult> {
  if (readOnly && typeof store.read !== 'function')
    throw configError(
      'store',
      'does not implement `read`, which a limiter of fastify.createRateLimit() needs for `{ increment: false }`',
    );
  return new Promise((resolve, reject) => {
    const done = (error: Error | null, result?: RateLimitStoreResult) =>
      error ? reject(error) : resolve(result as RateLimitStoreResult);
    if (readOnly) store.read?.(key, done, timeWindow, max);
    else store.incr(key, done, timeWindow, max);
  });
}

/**
 * The limit as a hook: once per request per registration. Within the limit it sets the headers and calls
 * `onExceeding`; past it, `onExceeded`, the headers, and throws what `errorResponseBuilder` builds (403 and
 * `onBanReach` once banned) for Fastify's error handler to answer.
 */
export function limitHandler(limit: Limit): RateLimitHandler {
  const { params, ran } = limit;
  const { labels, addHeaders, addHeadersOnExceeding } = params;
  return async (req, reply) => {
    const marks = req as unknown as Record<symbol, boolean>;
    if (marks[ran]) return undefined;
    marks[ran] = true;
    const check = await checkLimit(limit, req);
    if (check.isAllowed) return undefined;
    const { key, max, remaining, ttl, ttlInSeconds } = check;
    if (!check.isExceeded) {
      if (addHeadersOnExceeding[labels.rateLimit]) reply.header(labels.rateLimit, max);
      if (addHeadersOnExceeding[labels.rateRemaining]) reply.header(labels.rateRemaining, remaining);
      if (addHeadersOnExceeding[labels.rateReset]) reply.header(labels.rateReset, ttlInSeconds);
      params.onExceeding(req, key);
      return undefined;
    }
    params.onExceeded(req, key);
    if (addHeaders[labels.rateLimit]) reply.header(labels.rateLimit, max);
    if (addHeaders[labels.rateRemaining]) reply.header(labels.rateRemaining, 0);
    if (addHeaders[labels.rateReset]) reply.header(labels.rateReset, ttlInSeconds);
    if (addHeaders[labels.retryAfter]) reply.header(labels.retryAfter, ttlInSeconds);
    const context = { statusCode: 429, ban: false, max, ttl, after: waitText(ttlInSeconds) };
    if (check.isBanned) {
      context.statusCode = 403;
      context.ban = true;
      params.onBanReach(req, key);
    }
    throw params.errorResponseBuilder(req, context);
  };
}
