// Koa 3 middleware: resolve the client, ask the core, copy headers onto ctx, answer 429 (or throw it).
import type { Context, Response as KoaResponse, Middleware } from 'koa';
import { optionalFunction } from '../../core/validate.js';
import type { Decision } from '../../decision/decision.js';
import type { RateLimitInfo } from '../../decision/rate-limit-info.js';
import { createGate } from '../../gate/gate.js';
import type { GateOptions } from '../../gate/options.js';
import { whenOver } from '../../gate/response.js';
import { rejectionMessage, throwOption } from '../../gate/throw.js';

declare module 'koa' {
  interface DefaultState {
    /** The request's rate-limit figures, set by `rateLimit()` on every request it counted (admitted or not). */
    rateLimit?: RateLimitInfo;
  }
}

/** `requestWasSuccessful` gets `(ctx, ctx.response)`. */
export interface KoaRateLimitOptions extends GateOptions<Context, KoaResponse> {
  /** Answers a rejected request yourself by setting `ctx.body` (status and headers are already set). */
  readonly handler?: (ctx: Context, decision: Decision) => unknown;
  /**
   * Throw a rejection as `ctx.throw(statusCode, message, { headers, expose: true })` does, for the app's error
   * middleware to answer, instead of answering it here. The rate-limit headers are on `ctx` and on the error's
   * `headers`, which Koa's default error handler sets back after clearing the response's. Default false.
   */
  readonly throw?: boolean;
}

/**
 * Koa middleware: counts each request by `ctx.ip`, sets the rate-limit headers on `ctx`, and answers a rejection 429
 * itself (or throws it to the app's error middleware with `throw: true`). The figures are in `ctx.state.rateLimit`.
 *
 * @example
 * const app = new Koa();
 * app.use(rateLimit({ requestsPerMinute: 100 }));
 * app.use((ctx) => {
 *   ctx.body = { remaining: ctx.state.rateLimit?.remaining };
 * });
 * app.listen(3000);
 */
export function rateLimit(options: KoaRateLimitOptions = {}): Middleware {
  const gate = createGate<Context, KoaResponse>(options, {
    name: 'rateLimit',
    identifier: (ctx) => ctx.ip,
    options: ['handler', 'throw'],
  });
  const handler = optionalFunction('handler', options.handler);
  const throws = throwOption(options.throw, handler, "the app's error middleware answers it");

  return async (ctx, next) => {
    const outcome = await gate.check(ctx);
    if (outcome.action === 'fail') {
      ctx.status = outcome.status;
      ctx.body = outcome.body;
      return;
    }
    ctx.set(outcome.headers);
    if (outcome.info !== undefined) ctx.state.rateLimit = outcome.info;
    if (outcome.action === 'next') {
      const { complete } = outcome;
      if (complete === undefined) return next();
      // Koa writes the response once the middleware have returned (a thrown error's too, a stream to its end); for
      // a client that left, Koa 2 writes nothing, not even end(): the handler's end is the downstream settling.
      const downstream = next();
      whenOver(ctx.res, complete, ctx.response, downstream);
      return downstream;
    }
    if (throws) {
      const message = rejectionMessage(outcome.body);
      // Exposed whatever the status, since it is the client's answer; `headers` survive Koa's default handler.
      const props = { headers: outcome.headers, expose: true };
      if (message !== undefined) ctx.throw(outcome.status, message, props);
      // A body without a message of its own (a `message` object) leaves the status's text to http-errors.
      ctx.throw(outcome.status, props);
    }
    ctx.status = outcome.status;
    if (handler === undefined) ctx.body = outcome.body;
    else await handler(ctx, outcome.decision);
  };
}
