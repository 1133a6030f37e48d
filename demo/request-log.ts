// The demos' structured request logs: one line per request, with every limiter's decision and the client IP hashed.
import type { Request, RequestHandler } from 'express';
import { loggedAdminPath } from '../src/admin/admin-path.js';
import type { Logger } from '../src/core/logger.js';
import { decisionOutcome } from '../src/decision/outcome.js';
import type { DecisionEvent } from '../src/gate/options.js';
import { addressIdentity } from '../src/identity/address-identity.js';
import type { IdentifierHasher } from '../src/identity/identifier-hash.js';

/** What the demos log through: pino, or anything with its `info(object, message)`. */
export interface DemoLogger extends Logger {
  info(fields: object, message?: string): void;
  info(message: string): void;
}

export interface RequestLogOptions {
  readonly logger: DemoLogger;
  /** Log raw client IPs (LOG_CLIENT_IPS=1) instead of their keyed hashes. */
  readonly clientIps: boolean;
  readonly hasher: IdentifierHasher;
}

export interface RequestLog {
  /** Mount first: it times the request and logs it when the response is finished. */
  readonly middleware: RequestHandler;
  /** The gates' `onDecision`: attaches each decision to its request's log line. */
  readonly onDecision: (event: DecisionEvent, req: Request) => void;
}

interface LoggedDecision {
  readonly scope: string;
  /** allowed, denied, degraded-allowed, degraded-denied, or shadow (denied, but let through). */
  readonly decision: string;
  readonly remaining: number;
  readonly limit: number;
  readonly latencyMs: number;
}

export function requestLog({ logger, clientIps, hasher }: RequestLogOptions): RequestLog {
  const decisions = new WeakMap<Request, LoggedDecision[]>();
  const middleware: RequestHandler = (req, res, next) => {
    const started = performance.now();
    res.on('finish', () => {
      const address = addressIdentity(req.ip);
      logger.info(
        {
          method: req.method,
          path: loggedPath(req.originalUrl),
          status: res.statusCode,
          latencyMs: rounded(performance.now() - started),
          client: address === undefined || clientIps ? req.ip : hasher.hash(address),
          rateLimit: decisions.get(req) ?? [],
        },
        'request',
      );
    });
    next();
  };
  const onDecision = ({ scope, decision, latencyMs, shadow }: DecisionEvent, req: Request) => {
    let list = decisions.get(req);
    if (list === undefined) {
      list = [];
      decisions.set(req, list);
    }
    list.push({
      scope,
      decision: decisionOutcome(decision, shadow),
      remaining: decision.remaining,
      limit: decision.limit,
      latencyMs: rounded(latencyMs),
    });
  };
  return { middleware, onDecision };
}

/**
 * Without the query, and for anything under the admin path, in any spelling, only its route template: logs must
 * not undo the admin's hashing of the identifier a URL names.
 */
function loggedPath(url: string): string {
  return loggedAdminPath(url) ?? (url.split('?', 1)[0] as string);
}

function rounded(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
