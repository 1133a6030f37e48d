// Koa 3 middleware: resolve the client, ask the core, copy headers onto ctx, answer 429.
import type { Context, Response as KoaResponse, Middleware } from 'koa';
import type { Decision } from '../decision.js';
import { createGate } from '../gate.js';
import { whenSent } from '../gate-completion.js';
import type { GateOptions } from '../gate-options.js';
import { optionalFunction } from '../validate.js';

/** `requestWasSuccessful` gets `(ctx, ctx.response)`. */
export interface KoaRateLimitOptions extends GateOptions<Context, KoaResponse> {
  /** Answers a rejected request yourself by setting `ctx.body` (status and headers are already set). */
  readonly handler?: (ctx: Context, decision: Decision) => unknown;
}

export function rateLimit(options: KoaRateLimitOptions = {}): Middleware {
  const gate = createGate<Context, KoaResponse>(options, {
    name: 'rateLimit',
    identifier: (ctx) => ctx.ip,
    options: ['handler'],
  });
  const handler = optionalFunction('handler', options.handler);

  return async (ctx, next) => {
    const outcome = await gate.check(ctx);
    if (outcome.action === 'fail') {
      ctx.status = outcome.status;
      ctx.body = outcome.body;
      return;
    }
    ctx.set(outcome.headers);
    if (outcome.action === 'next') {
      const { complete } = outcome;
      // Koa writes the response once the middleware have returned (a thrown error's too, a stream to its end).
      if (complete !== undefined) whenSent(ctx.res, (status) => complete(status, ctx.response));
      return next();
    }
    ctx.status = outcome.status;
    if (handler === undefined) ctx.body = outcome.body;
    else await handler(ctx, outcome.decision);
  };
}
