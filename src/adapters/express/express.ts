// Express 4 and 5 middleware: resolve the client, ask the core, copy headers, answer 429.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { isPending } from '../../core/pending.js';
import { optionalFunction } from '../../core/validate.js';
import type { Decision } from '../../decision/decision.js';
import type { RateLimitInfo } from '../../decision/rate-limit-info.js';
import { createGate, type GateOutcome } from '../../gate/gate.js';
import type { GateOptions } from '../../gate/options.js';
import { whenOver } from '../../gate/response.js';
import { expressRateLimit } from './express-rate-limit/express-rate-limit.js';
import { expressRateLimitKey } from './express-rate-limit/keys.js';
import { proxyWarning } from './proxy-warning.js';

export { ipKeyGenerator } from './express-rate-limit/address.js';

import {
  EXPRESS_RATE_LIMIT_KEYS,
  type ExpressRateLimitCompatOptions,
  type ExpressRateLimitHandler,
  type WithoutExpressRateLimitKeys,
} from './express-rate-limit/types.js';

export type {
  DraftVersion,
  ExpressRateLimitCompatOptions,
  ExpressRateLimitHandler,
  ExpressRateLimitResolvedOptions,
  ValueOrFunction,
} from './express-rate-limit/types.js';

declare global {
  namespace Express {
    interface Request {
      /** The request's rate-limit figures, set by `tollgate/express`'s `rateLimit()` on every request it counted. */
      rateLimit?: RateLimitInfo;
    }
  }
}

export interface ExpressRateLimitOptions extends GateOptions<Request, Response>, WithoutExpressRateLimitKeys {
  /** Answers a rejected request yourself (headers are already set). */
  readonly handler?: (req: Request, res: Response, next: NextFunction, decision: Decision) => unknown;
}

/** Keys that read the options in express-rate-limit's style, for the advice on a typo of one. */
const ERL_STYLE = Object.fromEntries(
  EXPRESS_RATE_LIMIT_KEYS.map((key) => [
    key,
    "express-rate-limit's; any of its keys reads the options in its style",
  ]),
);

/**
 * Tollgate's options, or express-rate-limit's with its meaning: any key only it has (`windowMs`, `limit`, `max`,
 * `standardHeaders`, `keyGenerator`, `requestPropertyName`...) reads them all as it does (docs/migrating.md).
 *
 * @example
 * app.use(rateLimit({ requestsPerMinute: 300, scope: 'global' }));
 * app.use('/login', rateLimit({ windowMs: 15 * 60 * 1000, limit: 5, standardHeaders: 'draft-8' }));
 */
export function rateLimit(options?: ExpressRateLimitOptions): RequestHandler;
export function rateLimit(options: ExpressRateLimitCompatOptions): ExpressRateLimitHandler;
export function rateLimit(
  options: ExpressRateLimitOptions | ExpressRateLimitCompatOptions = {},
): RequestHandler {
  const style = expressRateLimitKey(options);
  if (style !== undefined) return expressRateLimit(options as ExpressRateLimitCompatOptions, style);
  const native = options as ExpressRateLimitOptions;
  const gate = createGate<Request, Response>(native, {
    name: 'rateLimit',
    identifier: (req) => req.ip,
    options: ['handler'],
    elsewhere: ERL_STYLE,
  });
  const handler = optionalFunction('handler', native.handler);
  const warn = proxyWarning(gate.logger);

  const answer = async (
    req: Request,
    res: Response,
    next: NextFunction,
    outcome: GateOutcome<Response>,
  ): Promise<void> => {
    if (outcome.action === 'fail') {
      res.status(outcome.status).json(outcome.body);
      return;
    }
    // As res.set does for these names (none is Content-Type), without its per-field copies.
    for (const name in outcome.headers) res.setHeader(name, outcome.headers[name] as string);
    if (outcome.info !== undefined) req.rateLimit = outcome.info;
    if (outcome.action === 'next') {
      const { complete } = outcome;
      // Over once the response is sent, or, when the client leaves first, once the handler ends it.
      if (complete !== undefined) whenOver(res, complete, res);
      return next();
    }
    if (handler === undefined) {
      res.status(outcome.status).json(outcome.body);
      return;
    }
    try {
      await handler(req, res, next, outcome.decision);
    } catch (error) {
      next(error);
    }
  };

  return (req, res, next) => {
    warn(req);
    // A memory store answers at once: no promise is awaited before the request goes on.
    const outcome = gate.checkNow(req);
    return isPending(outcome)
      ? outcome.then((known) => answer(req, res, next, known))
      : answer(req, res, next, outcome);
  };
}

/**
 * The default export too, as express-rate-limit has one: `import rateLimit from 'tollgate/express'` keeps working.
 * @alias
 */
export default rateLimit;
