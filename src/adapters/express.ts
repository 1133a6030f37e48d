// Express 4 and 5 middleware: resolve the client, ask the core, copy headers, answer 429.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Decision } from '../decision.js';
import { createGate } from '../gate.js';
import { whenSent } from '../gate-completion.js';
import type { GateOptions } from '../gate-options.js';
import { optionalFunction } from '../validate.js';

export interface ExpressRateLimitOptions extends GateOptions<Request, Response> {
  /** Answers a rejected request yourself (headers are already set). */
  readonly handler?: (req: Request, res: Response, next: NextFunction, decision: Decision) => unknown;
}

export function rateLimit(options: ExpressRateLimitOptions = {}): RequestHandler {
  const gate = createGate<Request, Response>(options, {
    name: 'rateLimit',
    identifier: (req) => req.ip,
    options: ['handler'],
  });
  const handler = optionalFunction('handler', options.handler);
  let warnedAboutProxy = false;

  return async (req, res, next) => {
    if (!warnedAboutProxy && req.headers['x-forwarded-for'] !== undefined && !req.app.get('trust proxy')) {
      warnedAboutProxy = true;
      gate.logger.warn(
        "[tollgate] X-Forwarded-For is present but Express's 'trust proxy' is off, so every client behind the " +
          "proxy shares one bucket. Set app.set('trust proxy', <number of proxies you control>).",
      );
    }
    const outcome = await gate.check(req);
    if (outcome.action === 'fail') {
      res.status(outcome.status).json(outcome.body);
      return;
    }
    res.set(outcome.headers);
    if (outcome.action === 'next') {
      const { complete } = outcome;
      // Whichever comes first, the response sent or the client gone, ends what the request holds.
      if (complete !== undefined) whenSent(res, (status) => complete(status, res));
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
}
