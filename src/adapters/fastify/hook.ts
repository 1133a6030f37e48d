// One Fastify limit as a hook: ask the gate, put the figures on the request, answer or throw a rejection.
import { STATUS_CODES } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../../core/logger.js';
import { optionalFunction } from '../../core/validate.js';
import type { Decision } from '../../decision/decision.js';
import type { RateLimitInfo } from '../../decision/rate-limit-info.js';
import { createGate, type GateOutcome } from '../../gate/gate.js';
import { whenOver } from '../../gate/response.js';
import { rejectionMessage, throwOption } from '../../gate/throw.js';
import type { Limiter } from '../../limiter/limiter.js';
import { type FastifyRateLimitHookOptions, HOOK_OPTIONS } from './options.js';

/** A limit as an async Fastify hook, for a route's own `onRequest` or `preHandler`. */
export type FastifyRateLimitHook = (
  request: FastifyRequest,
  reply: FastifyReply,
) => Promise<FastifyReply | undefined>;

type Rejection = Extract<GateOutcome, { action: 'reject' }>;

/**
 * What `throw: true` hands to Fastify's error handler: an error with the rejection's `statusCode`, as Fastify's
 * own HTTP errors carry theirs, and the answer the plugin would have sent in `body`.
 */
export class RateLimitError extends Error {
  override readonly name = 'RateLimitError';
  readonly statusCode: number;
  /** The JSON body the plugin sends when it answers the rejection itself. */
  readonly body: unknown;
  readonly decision: Decision;
  /** The request's figures, as on `request.rateLimit`. */
  readonly rateLimit: RateLimitInfo;

  constructor({ status, body, decision, info }: Rejection) {
    // The status's own text for a `message` object, as Fastify's error pages have it.
    super(rejectionMessage(body) ?? STATUS_CODES[status] ?? 'Rate limited');
    this.statusCode = status;
    this.body = body;
    this.decision = decision;
    this.rateLimit = info;
  }
}

/** The limit's hook, and the limiter it spends from (for route limits that share it). `where` names it in errors. */
export function limitHook(
  options: FastifyRateLimitHookOptions,
  where: string,
): { limiter: Limiter; hook: FastifyRateLimitHook } {
  const gate = createGate<FastifyRequest, FastifyReply>(options, {
    name: where,
    identifier: (request) => request.ip,
    options: HOOK_OPTIONS,
  });
  const handler = optionalFunction('handler', options.handler);
  const onExceeding = optionalFunction('onExceeding', options.onExceeding);
  const onExceeded = optionalFunction('onExceeded', options.onExceeded);
  const throws = throwOption(options.throw, handler, "Fastify's error handler answers it");
  // Fastify's logger for the request (its id bound) unless the options name one.
  const ownLogger = options.logger !== undefined;

  const hook: FastifyRateLimitHook = async (request, reply) => {
    const log = ownLogger ? gate.logger : request.log;
    const outcome = await gate.check(request, log);
    if (outcome.action === 'fail') return reply.code(outcome.status).send(outcome.body);
    reply.headers(outcome.headers);
    const { info } = outcome;
    if (info !== undefined) {
      request.rateLimit = info;
      if (info.decision.allowed) notify(onExceeding, 'onExceeding', request, info.key, log);
      else notify(onExceeded, 'onExceeded', request, info.key, log);
    }
    if (outcome.action === 'next') {
      const { complete } = outcome;
      // The raw response, not onResponse: that hook never runs for a client that left. Fastify ends the raw
      // response of a handler that returns (or sends) after its client left, and pipes a stream into it.
      if (complete !== undefined) whenOver(reply.raw, complete, reply);
      return undefined;
    }
    // Left without a status, as Fastify's errors are: the error handler sets the error's.
    if (throws) throw new RateLimitError(outcome);
    reply.code(outcome.status);
    const body = handler === undefined ? outcome.body : await handler(request, reply, outcome.decision);
    // An async hook must send and return the reply to stop the request here.
    return reply.sent ? reply : reply.send(body);
  };
  return { limiter: gate.limiter, hook };
}

/** A failing callback must not fail the request it reports on, nor a promise it returns, nor the logger. */
function notify(
  callback: ((request: FastifyRequest, key: string) => unknown) | undefined,
  name: string,
  request: FastifyRequest,
  key: string,
  log: Logger,
): void {
  const failed = (error: unknown) => {
    try {
      log.error(error, `[tollgate] ${name} threw; the request goes on`);
    } catch {}
  };
  try {
    const result = callback?.(request, key);
    if (result instanceof Promise) result.catch(failed);
  } catch (error) {
    failed(error);
  }
}
