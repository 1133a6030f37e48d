// Express middleware with express-rate-limit's meaning: every hit counted, its headers, req.rateLimit, handler.
import type { Request, RequestHandler, Response } from 'express';
import { argumentError, storeError, type TollgateError } from '../../../core/errors.js';
import type { Decision } from '../../../decision/decision.js';
import type { RateLimitInfo } from '../../../decision/rate-limit-info.js';
import type { Complete } from '../../../gate/completion.js';
import { createGate, notify } from '../../../gate/gate.js';
import { fixedWindow } from '../../../policies/fixed-window.js';
import type { AnyPolicy } from '../../../policies/policy.js';
import { proxyWarning } from '../proxy-warning.js';
import { expressRateLimitStyle } from './options.js';
import type { ExpressRateLimitCompatOptions, ExpressRateLimitHandler } from './types.js';

/** Policies already built for a (limit, name) pair; a limit function's few values each get one. */
const MAX_POLICIES = 64;
const IGNORED_IDENTIFIER =
  "[tollgate] in express-rate-limit's style `identifier` names the policy in draft-8 headers; the client key is " +
  "`keyGenerator`, and without `standardHeaders: 'draft-8'` `identifier` does nothing.";

/**
 * As express-rate-limit counts: each hit of a window, a denied one too, against the limit of this request (so a
 * limit that is a function of the request applies to the same count). A hit is given back per
 * `skipFailedRequests` / `skipSuccessfulRequests` only while its window lasts.
 */
export function expressRateLimit(
  options: ExpressRateLimitCompatOptions,
  trigger: string,
): ExpressRateLimitHandler {
  const style = expressRateLimitStyle(options, trigger);
  // What fails goes to Express's error handling, which reports it: the gate logging it too would say it twice.
  const gate = createGate<Request, Response>(style.gate, {
    name: 'rateLimit',
    identifier: (req) => req.ip,
    reportsFailures: false,
  });
  // express-rate-limit takes `identifier` without draft-8 too (and does nothing with it): one moving from
  // Tollgate's options may mean the client key by it.
  if (options.identifier !== undefined && style.name === undefined) gate.logger.warn(IGNORED_IDENTIFIER);
  const warn = style.warnBehindProxy ? proxyWarning(gate.logger) : undefined;
  const policyOf = policies(style.windowMs);
  const { limiter } = gate;

  const middleware: RequestHandler = async (req, res, next) => {
    warn?.(req);
    const started = style.onDecision === undefined ? 0 : performance.now();
    const outcome = await gate.check(req);
    // What failed (a keyGenerator, skip) goes to Express's error handling, as express-rate-limit hands it on.
    if (outcome.action === 'fail') return next(outcome.error);
    const counted = outcome.decision;
    // Skipped, or let through by passOnStoreError while the store is down: not counted, so no figures.
    if (counted === undefined || counted.degraded === 'fail-open') return next();
    if (counted.degraded === 'fail-closed') return next(storeDown());
    // The hit goes back only to the window that counted it, as express-rate-limit has it: the core refunds by
    // when a unit was spent, so a request that outlives its window gives nothing back to a later one.
    const { complete } = outcome.action === 'next' ? outcome : {};
    if (complete !== undefined) asExpressRateLimitEnds(res, complete);
    let decision: Decision;
    try {
      const limit = perRequestLimit(await style.limit(req, res), style.maxLimit);
      const name = style.name === undefined ? undefined : await style.name(req, res, limit);
      // The window's hits so far: this one, and denied ones too. A full counter counts no more, so past it this
      // is the least the client has sent (one more than it holds), and the request is denied whatever its limit.
      const used = counted.limit - counted.remaining + (counted.allowed ? 0 : 1);
      decision = verdict(counted, used, policyOf(limit, name));
      if (style.onDecision !== undefined) {
        const event = {
          scope: limiter.scope,
          decision,
          latencyMs: performance.now() - started,
          shadow: false,
        };
        notify(style.onDecision, event, req, gate.logger);
      }
      const key = outcome.info?.key ?? '';
      (req as unknown as Record<string, unknown>)[style.property] = figures(decision, used, key);
      if (style.headers !== undefined && !res.headersSent) {
        const headers = style.headers(decision, key);
        if (!decision.allowed && style.retryAfter !== undefined)
          headers['Retry-After'] = String(await style.retryAfter(req, res));
        res.set(headers);
      }
      if (!decision.allowed) await style.handler(req, res, next, style.options);
    } catch (error) {
      return next(error);
    }
    if (decision.allowed) next();
  };
  return Object.assign(middleware, {
    resetKey: (key: string) => limiter.reset(key),
    getKey: async (key: string) => {
      // A look at the count that spends nothing: no hits means express-rate-limit's store has no entry.
      const { limit, remaining, nowMs, resetMs } = await limiter.peek(key, { cost: 0 });
      const totalHits = limit - remaining;
      return totalHits === 0 ? undefined : { totalHits, resetTime: new Date(nowMs + resetMs) };
    },
  });
}

/**
 * When a hit is given back, by express-rate-limit's rule: per its status once the response is sent ('finish'),
 * and as a failure when the connection closes before the response was ended, whatever the handler does next (a
 * client that aborts every request is never counted under skipFailedRequests there). A response ended but cut
 * off in transit is neither: it stays counted. The counter holds no slot, so nothing waits for the handler.
 */
function asExpressRateLimitEnds(res: Response, complete: Complete<Response>): void {
  res.once('finish', () => complete(res.statusCode, res));
  res.once('close', () => {
    if (!res.writableEnded) complete.left(res);
  });
}

/**
 * express-rate-limit's decision: `used` hits so far in the counted window, over `policy`. A counter that denied
 * (it is full) denies too; what the count says of the store (`degraded`: the memory fallback answered) holds.
 */
function verdict(counted: Decision, used: number, policy: AnyPolicy): Decision {
  const allowed = counted.allowed && used <= policy.limit;
  const remaining = Math.max(policy.limit - used, 0);
  const { resetMs, nowMs } = counted;
  const retryAfterMs = allowed ? 0 : resetMs;
  const policies = [{ allowed, remaining, resetMs, retryAfterMs, policy }];
  const decision = {
    allowed,
    limit: policy.limit,
    remaining,
    resetMs,
    nowMs,
    policies,
    ...(counted.degraded === undefined ? {} : { degraded: counted.degraded }),
  };
  return allowed ? decision : { ...decision, retryAfterMs };
}

/**
 * `req.rateLimit` as express-rate-limit sets it: `used` counts denied hits too (so it passes `limit`), and
 * `current` (its older name) and Tollgate's `decision` are there but not enumerated, so the object serialises alike.
 */
function figures(decision: Decision, used: number, key: string): RateLimitInfo {
  const { limit, remaining } = decision;
  const info = { limit, used, remaining, resetTime: new Date(decision.nowMs + decision.resetMs), key };
  Object.defineProperties(info, { current: { value: used }, decision: { value: decision } });
  return info as typeof info & { readonly decision: Decision };
}

/** One fixed window per (limit, name), built once: what the headers describe for a request of that limit. */
function policies(windowMs: number): (limit: number, name: string | undefined) => AnyPolicy {
  const built = new Map<string, AnyPolicy>();
  return (limit, name) => {
    const id = `${limit} ${name}`;
    let policy = built.get(id);
    if (policy === undefined) {
      if (built.size >= MAX_POLICIES) built.clear();
      policy = fixedWindow({ limit, windowMs, ...(name === undefined ? {} : { name }) });
      built.set(id, policy);
    }
    return policy;
  };
}

/** A limit function's value: above `max` the counter could not tell the limit was reached. */
function perRequestLimit(limit: unknown, max: number): number {
  if (typeof limit === 'number' && Number.isSafeInteger(limit) && limit >= 0 && limit <= max) return limit;
  throw argumentError(
    `\`limit\` must give a non-negative integer of at most ${max} with this \`windowMs\` (gave ${String(limit)})`,
  );
}

function storeDown(): TollgateError {
  return storeError(
    'the rate limit store is unreachable, and `passOnStoreError` is false: the request is not let through',
  );
}
