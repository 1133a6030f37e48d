// The NestJS guard: asks the route's gate, sets the headers on the platform's response, throws the rejection.
import { type CanActivate, type ExecutionContext, HttpException, Inject, Injectable } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Decision } from '../../decision/decision.js';
import type { RateLimitInfo } from '../../decision/rate-limit-info.js';
import { isNodeResponse, type NodeResponse, whenOver } from '../../gate/response.js';
import { httpParts, type RequestParts, wsException, wsRequest } from './contexts.js';
import type { NestGate, RateLimitGates } from './gates.js';
import type { HttpRequest } from './options.js';

/** The token of the app's gates, provided by TollgateModule. */
export const RATE_LIMIT_GATES = Symbol('RateLimitGates');
/** The requests a guard has seen: bound twice (app-wide and by @UseGuards), it still counts a request once. */
const seen = new WeakSet<object>();

/**
 * A request over its limit: status and body are the options' (`statusCode`, `message`), the rate-limit headers
 * are already on the response. Nest's exception filters answer it; catch it in your own to shape the answer.
 */
export class RateLimitException extends HttpException {
  /** The client's figures, `decision` included (also on `request.rateLimit`). */
  readonly info: RateLimitInfo;

  constructor(body: unknown, status: number, info: RateLimitInfo) {
    super(body as Record<string, unknown>, status);
    this.name = 'RateLimitException';
    this.info = info;
  }
}

/**
 * Limits routes with the options of TollgateModule, or of the route's @RateLimit. Bind it app-wide with
 * `TollgateModule.forRoot({ global: true })`, or per controller or handler with `@UseGuards(RateLimitGuard)`.
 * HTTP and GraphQL requests (the request and response of the GraphQL context) are answered with a
 * RateLimitException; a WebSocket message is counted for its client's address and refused with a WsException the
 * gateway sends its client. Microservice contexts pass untouched.
 *
 * @example
 * ```ts
 * // One controller limited, with TollgateModule.forRoot() imported once in the root module.
 * @Controller('exports')
 * @UseGuards(RateLimitGuard)
 * @RateLimit({ policy: concurrency({ max: 2, leaseMs: '5m' }), scope: 'exports' })
 * export class ExportsController {}
 * ```
 */
export class RateLimitGuard implements CanActivate {
  readonly #gates: RateLimitGates;
  readonly #adapterHost: HttpAdapterHost;
  #warnedUnwatchable = false;

  constructor(gates: RateLimitGates, adapterHost: HttpAdapterHost) {
    this.#gates = gates;
    this.#adapterHost = adapterHost;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const type = context.getType<string>();
    if (type !== 'http' && type !== 'graphql' && type !== 'ws') return true;
    const gate = this.#gates.forRoute([context.getHandler(), context.getClass()]);
    if (gate === undefined) return true;
    if (type === 'ws') return message(gate, wsRequest(context) as unknown as HttpRequest);
    const parts = httpParts(context) as RequestParts;
    // A GraphQL context without the request still counts, as a client of unknown address.
    const request = (parts.request ?? { headers: {} }) as HttpRequest;
    if (seen.has(request)) return true;
    seen.add(request);
    const { response } = parts;
    const outcome = await gate.check(request);
    if (outcome.action === 'fail')
      throw new HttpException(outcome.body as Record<string, unknown>, outcome.status, {
        cause: outcome.error,
      });
    // Through the platform's adapter: Express's `res.set`, Fastify's `reply.header`.
    const { httpAdapter } = this.#adapterHost;
    if (typeof response === 'object' && response !== null)
      for (const [name, value] of Object.entries(outcome.headers))
        httpAdapter.setHeader(response, name, value);
    if (outcome.info !== undefined) request.rateLimit = outcome.info;
    if (outcome.action === 'reject') throw new RateLimitException(outcome.body, outcome.status, outcome.info);
    const { complete } = outcome;
    if (complete === undefined) return true;
    const raw = nodeResponse(response);
    if (raw !== undefined) {
      // Nest ends the response with what the handler returned (its reply, a StreamableFile piped into it), also
      // after the client left: that is the handler's end.
      whenOver(raw, complete, response);
      return true;
    }
    if (!this.#warnedUnwatchable) {
      this.#warnedUnwatchable = true;
      gate.logger.warn(
        '[tollgate] this Nest platform gives no node:http response to watch, so concurrency slots are freed as ' +
          'each request is admitted and no request is refunded (skipFailedRequests and skipSuccessfulRequests ' +
          'do nothing); use the Express or Fastify platform',
      );
    }
    releaseNow(gate, outcome.decision);
    return true;
  }
}

/**
 * A WebSocket message: counted for its client's address, refused with an exception the gateway sends its client
 * (`{ event: 'exception', data: { status: 'error', message } }`). A message has no end Nest tells of, so a
 * concurrency slot is freed as it is admitted.
 */
async function message(gate: NestGate, request: HttpRequest): Promise<boolean> {
  const outcome = await gate.check(request);
  if (outcome.action !== 'next') throw wsException(outcome.body as string | object);
  releaseNow(gate, outcome.decision);
  return true;
}

/**
 * Only the slot: `complete` would count the request as failed (no status), and skipFailedRequests would then
 * refund every request, leaving the route unlimited.
 */
function releaseNow(gate: NestGate, decision: Decision | undefined): void {
  // Freed as it is admitted, its round trip is no measure of the service: an adaptive limit must not learn from it.
  decision?.release?.({ measured: false }).catch((error: unknown) => {
    try {
      gate.logger.error(
        error,
        '[tollgate] releasing the concurrency slot failed; it frees when its lease expires',
      );
    } catch {}
  });
}

/** Express hands the node:http response itself, Fastify its reply with the response as `raw`. */
function nodeResponse(response: unknown): NodeResponse | undefined {
  if (isNodeResponse(response)) return response;
  const raw = (response as { raw?: unknown } | undefined)?.raw;
  return isNodeResponse(raw) ? raw : undefined;
}

// What decorators would do, applied as functions: no decorator syntax or emitted metadata is needed to build this.
Injectable()(RateLimitGuard);
Inject(RATE_LIMIT_GATES)(RateLimitGuard, undefined, 0);
Inject(HttpAdapterHost)(RateLimitGuard, undefined, 1);
