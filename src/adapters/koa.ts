// Koa 3 middleware: resolve the client, ask the core, copy headers onto ctx, answer 429.
import type { Context, Middleware } from 'koa';
import type { Decision } from '../decision.js';
import { createGate, type GateOptions } from '../gate.js';
import { optionalFunction } from '../validate.js';

export interface KoaRateLimitOptions extends GateOptions<Context> {
  /** Answers a rejected request yourself by setting `ctx.body` (status and headers are already set). */
  readonly handler?: (ctx: Context, decision: Decision) => unknown;
}

export function rateLimit(options: KoaRateLimitOptions = {}): Middleware {
  const gate = createGate(options, { name: 'rateLimit', identifier: (ctx) => ctx.ip, options: ['handler'] });
  const handler = optionalFunction('handler', options.handler);

  return async (ctx, next) => {
    const outcome = await gate.check(ctx);
    if (outcome.action === 'fail') {
      ctx.status = outcome.status;
      ctx.body = outcome.body;
      return;
    }
    ctx.set(outcome.headers);
    if (outcome.action === 'next') return next();
    ctx.status = outcome.status;
    if (handler === undefined) ctx.body = outcome.body;
    else await handler(ctx, outcome.decision);
  };
}
