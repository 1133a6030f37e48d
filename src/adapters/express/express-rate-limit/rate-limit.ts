// express-rate-limit's middleware: count the hit in the store, set the figures and fields, answer over the limit.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { giveBackWhenDone, listenForEnds } from './give-back.js';
import {
  setDraft6Headers,
  setDraft7Headers,
  setDraft8Headers,
  setLegacyHeaders,
  setRetryAfterHeader,
} from './headers.js';
import { type Config, parseOptions } from './options.js';
import { passedStore, TollgateCounter } from './tollgate-counter.js';
import type { ClientRateLimitInfo, Options, RateLimitInfo, RateLimitRequestHandler } from './types.js';

/**
 * express-rate-limit 8's `rateLimit`: the same options, defaults, checks, fields and store interface, so an app
 * moves by changing its import. Any express-rate-limit store works (rate-limit-redis...), and so does a Tollgate
 * store (`RedisStore`, `MemoryStore`) given as `store`, counting exactly on Redis and Redis Cluster.
 *
 * @example
 * import { rateLimit } from 'tollgate/express-rate-limit';
 * app.use(rateLimit({ windowMs: 15 * 60 * 1000, limit: 100, standardHeaders: 'draft-8', legacyHeaders: false }));
 */
export function rateLimit(passed?: Partial<Options>): RateLimitRequestHandler {
  const config = parseOptions(passed ?? {});
  // What `handler` and the store's `init` are given: the options, with the checks' switches as they stand.
  const { validations: checks, ...rest } = config;
  const options = { ...rest, validate: checks.enabled } as Options;
  checks.creationStack(config.store);
  // On what the app passed: each limiter wraps a Tollgate store given as `store` in a counter of its own.
  checks.unsharedStore(passedStore(config.store));
  initStore(config, options);
  if (config.store instanceof TollgateCounter && config.store.clash !== undefined)
    checks.report(config.store.clash);
  const limit = limitRequest(config, options);
  const middleware: RequestHandler = async (req, res, next) => {
    try {
      await Promise.resolve(limit(req, res, next)).catch(next);
    } catch (error) {
      next(error);
    }
  };
  const { store } = config;
  return Object.assign(middleware, {
    resetKey: store.resetKey.bind(store),
    getKey:
      typeof store.get === 'function'
        ? store.get.bind(store)
        : () => {
            throw new Error('The current store does not support the get/getKey method');
          },
  });
}

/** The store's `init`, whose failure (thrown or rejected) is logged: the limiter is built all the same. */
function initStore(config: Config, options: Options): void {
  const { store, logger } = config;
  if (typeof store.init !== 'function') return;
  try {
    const started = store.init(options);
    if (started instanceof Promise)
      started.catch((error) =>
        logger.error(error, 'express-rate-limit: async error during store initialization.'),
      );
  } catch (error) {
    logger.error(error, 'express-rate-limit: error during store initialization.');
  }
}

function limitRequest(config: Config, options: Options) {
  const { validations: checks } = config;
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const ends = listenForEnds(config, res);
    if (await config.skip(req, res)) return next();
    const key = await config.keyGenerator(req, res);
    const counted = await count(config, key);
    if (counted === undefined) return next();
    const { totalHits, resetTime } = counted;
    checks.positiveHits(totalHits);
    checks.singleCount(req, config.store, key);
    const limit = await (typeof config.limit === 'function' ? config.limit(req, res) : config.limit);
    checks.limit(limit);
    const info: RateLimitInfo = {
      limit,
      used: totalHits,
      remaining: Math.max(limit - totalHits, 0),
      resetTime,
      key,
    };
    // The older name of `used`, kept readable but out of JSON and of Object.keys.
    Object.defineProperty(info, 'current', { configurable: false, enumerable: false, value: totalHits });
    (req as unknown as Record<string, RateLimitInfo>)[config.requestPropertyName] = info;
    await setHeaders(config, req, res, info);
    if (config.skipFailedRequests || config.skipSuccessfulRequests)
      giveBackWhenDone(config, req, res, key, resetTime, ends);
    if (totalHits <= limit) return next();
    if (config.legacyHeaders || config.standardHeaders) {
      const { retryAfter } = config;
      const seconds = await (typeof retryAfter === 'function' ? retryAfter(req, res) : retryAfter);
      setRetryAfterHeader(res, info, config.windowMs, seconds);
    }
    await config.handler(req, res, next, options);
  };
}

/**
 * The hit counted, or undefined when the store failed under `passOnStoreError` (logged; the request goes on
 * uncounted). A reset time the give-back compares with is copied, so a store reusing its object cannot move it.
 */
async function count(config: Config, key: string): Promise<ClientRateLimitInfo | undefined> {
  try {
    const { totalHits, resetTime } = await config.store.increment(key);
    const copied = resetTime && (config.skipFailedRequests || config.skipSuccessfulRequests);
    return { totalHits, resetTime: copied ? new Date(resetTime.getTime()) : resetTime };
  } catch (error) {
    if (!config.passOnStoreError) throw error;
    config.logger.error(
      error,
      'express-rate-limit: error from store, allowing request without rate-limiting.',
    );
    return undefined;
  }
}

async function setHeaders(config: Config, req: Request, res: Response, info: RateLimitInfo): Promise<void> {
  const { standardHeaders, windowMs, validations: checks } = config;
  if (config.legacyHeaders && !res.headersSent) setLegacyHeaders(res, info);
  if (!standardHeaders || res.headersSent) return;
  if (standardHeaders === 'draft-6') return setDraft6Headers(res, info, windowMs);
  if (standardHeaders === 'draft-7') {
    checks.headersResetTime(info.resetTime);
    return setDraft7Headers(res, info, windowMs);
  }
  if (standardHeaders !== 'draft-8') return checks.headersDraftVersion(standardHeaders);
  const { identifier } = config;
  const name = await (typeof identifier === 'function' ? identifier(req, res) : identifier);
  checks.headersResetTime(info.resetTime);
  setDraft8Headers(res, info, windowMs, name, info.key);
}
