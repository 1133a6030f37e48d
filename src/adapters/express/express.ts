// Express 4 and 5 middleware: resolve the client, ask the core, copy headers, answer 429.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { isPending } from '../../core/pending.js';
import { optionalFunction } from '../../core/validate.js';
import type { Decision } from '../../decision/decision.js';
import type { RateLimitInfo } from '../../decision/rate-limit-info.js';
import { createGate, type GateOutcome } from '../../gate/gate.js';
import type { GateOptions } from '../../gate/options.js';
import { whenOver } from '../../gate/response.js';
import { proxyWarning } from './proxy-warning.js';

declare global {
  namespace Express {
    interface Request {
      /** The request's rate-limit figures, set by `tollgate/express`'s `rateLimit()` on every request it counted. */
      rateLimit?: RateLimitInfo;
    }
  }
}

/** express-rate-limit's own keys: its meaning lives at `tollgate/express-rate-limit`, so here each is refused. */
const ERL_ONLY = [
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

/** Said of each: what the subpath is, and Tollgate's own way to write the usual ones. */
const ELSEWHERE = Object.fromEntries(
  ERL_ONLY.map((key) => [
    key,
    "an express-rate-limit option: for its options and meaning, import rateLimit from 'tollgate/express-rate-limit'; " +
      "in Tollgate's own, a window is `policy: fixedWindow({ limit, windowMs })`, the client `identifier`, the fields `headers`",
  ]),
);

/** express-rate-limit's keys belong to `tollgate/express-rate-limit`: TypeScript flags them here. */
type WithoutExpressRateLimitKeys = { readonly [K in (typeof ERL_ONLY)[number]]?: never };

export interface ExpressRateLimitOptions extends GateOptions<Request, Response>, WithoutExpressRateLimitKeys {
  /** Answers a rejected request yourself (headers are already set). */
  readonly handler?: (req: Request, res: Response, next: NextFunction, decision: Decision) => unknown;
}

/**
 * Tollgate's middleware for Express 4 and 5, with Tollgate's options (docs/adapters.md). For express-rate-limit's
 * options and meaning, `tollgate/express-rate-limit` is the drop-in (docs/migrating.md).
 *
 * @example
 * app.use(rateLimit({ requestsPerMinute: 300, scope: 'global' }));
 * app.use('/login', rateLimit({ policy: fixedWindow({ limit: 5, windowMs: '15m' }), scope: 'login' }));
 */
export function rateLimit(options: ExpressRateLimitOptions = {}): RequestHandler {
  const gate = createGate<Request, Response>(options, {
    name: 'rateLimit',
    identifier: (req) => req.ip,
    options: ['handler'],
    elsewhere: ELSEWHERE,
  });
  const handler = optionalFunction('handler', options.handler);
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
 * The default export too: `import rateLimit from 'tollgate/express'`.
 * @alias
 */
export default rateLimit;
