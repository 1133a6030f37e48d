// Plain node:http: a check that answers rejections itself and tells the caller whether to go on, and a wrapper.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { optionalFunction } from '../../core/validate.js';
import type { Decision } from '../../decision/decision.js';
import type { RateLimitInfo } from '../../decision/rate-limit-info.js';
import { createGate } from '../../gate/gate.js';
import type { GateOptions } from '../../gate/options.js';
import { whenOver } from '../../gate/response.js';

declare module 'node:http' {
  interface IncomingMessage {
    /** The request's rate-limit figures, set by `tollgate/node`'s `rateLimit()` on every request it counted. */
    rateLimit?: RateLimitInfo;
  }
}

export interface NodeRateLimitOptions extends GateOptions<IncomingMessage, ServerResponse> {
  /** Answers a rejected request yourself and ends `res` (status and headers are already set). */
  readonly handler?: (req: IncomingMessage, res: ServerResponse, decision: Decision) => unknown;
}

/** Resolves true when the request may go on, false when the limiter has already answered it. */
export type NodeRateLimit = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

/**
 * A check for plain node:http: it counts the request by its socket's address, sets the rate-limit headers and
 * answers a rejection itself, then resolves whether the request may go on (`withRateLimit` wraps a handler in it).
 *
 * @example
 * const limit = rateLimit({ requestsPerMinute: 100 });
 * createServer(async (req, res) => {
 *   if (!(await limit(req, res))) return; // already answered: 429, or 500 when the limiter failed
 *   res.end(`remaining: ${req.rateLimit?.remaining}`);
 * }).listen(3000);
 */
export function rateLimit(options: NodeRateLimitOptions = {}): NodeRateLimit {
  const gate = createGate<IncomingMessage, ServerResponse>(options, {
    name: 'rateLimit',
    identifier: (req) => req.socket.remoteAddress,
    options: ['handler'],
  });
  const handler = optionalFunction('handler', options.handler);

  return async (req, res) => {
    const outcome = await gate.check(req);
    if (outcome.action === 'fail') {
      sendJson(res, outcome.status, outcome.body);
      return false;
    }
    for (const [name, value] of Object.entries(outcome.headers)) res.setHeader(name, value);
    if (outcome.info !== undefined) req.rateLimit = outcome.info;
    if (outcome.action === 'next') {
      const { complete } = outcome;
      // Over once the response is sent, or, when the client leaves first, once the handler ends it.
      if (complete !== undefined) whenOver(res, complete, res);
      return true;
    }
    if (handler === undefined) {
      sendJson(res, outcome.status, outcome.body);
    } else {
      res.statusCode = outcome.status;
      await handler(req, res, outcome.decision);
    }
    return false;
  };
}

/** `createServer(withRateLimit(options, handler))`: `handler` runs only for requests the limiter lets through. */
export function withRateLimit(
  options: NodeRateLimitOptions,
  handler: (req: IncomingMessage, res: ServerResponse) => unknown,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const limit = rateLimit(options);
  return async (req, res) => {
    if (await limit(req, res)) await handler(req, res);
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.end(JSON.stringify(body));
}
