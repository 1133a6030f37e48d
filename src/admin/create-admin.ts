// The admin endpoints as one framework-free handler: bearer auth in constant time, throttled, and no identifier in the clear.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Duration, parseDuration } from '../core/duration.js';
import { configError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { knownKeys, loggerOption, optionalFunction, positiveInteger } from '../core/validate.js';
import { addressIdentity } from '../identity/address-identity.js';
import { identifierHasher } from '../identity/identifier-hash.js';
import { createLimiter, type Limiter } from '../limiter/limiter.js';
import { fixedWindow } from '../policies/fixed-window.js';
import { MemoryStore } from '../stores/memory/memory-store.js';
import type { Store } from '../stores/store.js';
import { type AdminRoute, adminRoute, DEFAULT_ADMIN_BASE_PATH, normalizedPath } from './admin-path.js';
import { type Answer, type Routing, route, tooManyAttempts, UNAUTHORIZED } from './admin-routes.js';
import { bearerTokenCheck } from './bearer-token.js';

export interface AdminOptions {
  /** The bearer token, 16 characters or more (e.g. `openssl rand -hex 24`). */
  readonly token: string;
  /** The limiters reset, bucket, blocks and unblock act on, found by scope. */
  readonly limiters: readonly Limiter[];
  /** What stats lists. Default: the limiters' stores. */
  readonly store?: Store;
  /** Secret of the identifier hashes. Default `token`, so instances sharing a token give the same hashes. */
  readonly hashKey?: string | Uint8Array;
  /** Turns the `:identifier` of a URL into the identity the limiters use. Default `addressIdentity` (IPv6 /64, mapped IPv4). */
  readonly identify?: (identifier: string) => string | undefined;
  /** The address failed attempts are counted by. Default the socket's; behind a proxy, the client's. */
  readonly clientAddress?: (req: IncomingMessage) => string | undefined;
  /** Failed attempts per client address and window before every admin request answers 429. Default 10. */
  readonly maxFailures?: number;
  /** Default one minute. */
  readonly failureWindowMs?: Duration;
  /** Where the routes live, a normalised path (no `.`, `..` or `//`). Default '/api/admin'. */
  readonly basePath?: string;
  /** For a store that fails while listing or reading. Default console. */
  readonly logger?: Logger;
  /** Epoch ms for the failure throttle; for tests. */
  readonly clock?: () => number;
}

/** Resolves true when it answered the request (an admin path), false to let the application go on. */
export type AdminHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

const OPTIONS = [
  'token',
  'limiters',
  'store',
  'hashKey',
  'identify',
  'clientAddress',
  'maxFailures',
  'failureWindowMs',
  'basePath',
  'logger',
  'clock',
];

/** The admin options, checked once: what the routes act on, and what guards them. */
interface ResolvedAdmin extends Routing {
  readonly authorized: (authorization: string | undefined) => boolean;
  readonly clientAddress: (req: IncomingMessage) => string | undefined;
  readonly basePath: string;
  readonly logger: Logger;
  /** Failed attempts per client address, in a store of its own. */
  readonly failures: Limiter;
}

export function createAdmin(options: AdminOptions): AdminHandler {
  const admin = resolveAdminOptions(options);
  return async (req, res) => {
    // Every spelling of an admin path is answered here (`/api/admin/./reset/...` is the reset route), so none
    // slips past to the application, and the request log reads paths the same way.
    const target = adminRoute(req.url ?? '/', admin.basePath);
    if (target === undefined) return false;
    const { status, body, headers = {} } = await answer(admin, req, target);
    res.writeHead(status, {
      ...headers,
      'Content-Type': 'application/json; charset=utf-8',
      // Admin answers describe clients: no cache may keep them.
      'Cache-Control': 'no-store',
    });
    res.end(JSON.stringify(body));
    return true;
  };
}

function resolveAdminOptions(options: AdminOptions): ResolvedAdmin {
  if (typeof options !== 'object' || options === null)
    throw configError('options', 'must be an object', options);
  knownKeys('createAdmin', options, OPTIONS);
  const authorized = bearerTokenCheck(options.token);
  const limiters = byScope(options.limiters);
  const listable = listableStores(options.store, options.limiters);
  // HMAC keyed with the token reveals nothing of it, and needs no second secret to agree across instances.
  const hasher = identifierHasher(options.hashKey ?? options.token);
  const identify = optionalFunction('identify', options.identify) ?? ((id: string) => addressIdentity(id));
  const clientAddress =
    optionalFunction('clientAddress', options.clientAddress) ?? ((req) => req.socket.remoteAddress);
  const basePath = options.basePath ?? DEFAULT_ADMIN_BASE_PATH;
  // Requests are matched by their normalised path, which a base path in another spelling would never equal.
  if (typeof basePath !== 'string' || basePath === '/' || normalizedPath(basePath) !== basePath)
    throw configError('basePath', 'must be a normalised path such as "/api/admin"', basePath);
  const logger = loggerOption(options.logger, console);
  // Its own in-process store: the throttle must hold even when the shared store is down, and its buckets have
  // no business in the stats.
  const failures = createLimiter({
    policy: fixedWindow({
      limit: positiveInteger('maxFailures', options.maxFailures ?? 10),
      windowMs: parseDuration('failureWindowMs', options.failureWindowMs ?? 60_000),
    }),
    store: new MemoryStore(options.clock === undefined ? {} : { clock: options.clock }),
    scope: 'tollgate-admin-auth',
  });
  return { limiters, listable, hasher, identify, authorized, clientAddress, basePath, logger, failures };
}

async function answer(admin: ResolvedAdmin, req: IncomingMessage, target: AdminRoute): Promise<Answer> {
  const client = addressIdentity(admin.clientAddress(req)) ?? 'unknown';
  // Every attempt spends before the token is even looked at, so parallel guesses cannot outrun the count;
  // a success then clears it. A blocked client gets 429 whatever it sends, or the status would tell it
  // which guess was right.
  const attempt = await admin.failures.consume(client);
  if (!attempt.allowed) return tooManyAttempts(attempt);
  if (!admin.authorized(req.headers.authorization)) return UNAUTHORIZED;
  await admin.failures.reset(client);
  try {
    return await route(admin, req.method ?? 'GET', target, queryOf(req.url ?? '/'));
  } catch (error) {
    admin.logger.error(error, '[tollgate] admin request failed');
    return { status: 503, body: { error: 'the store could not answer' } };
  }
}

function byScope(limiters: readonly Limiter[]): Map<string, Limiter> {
  if (!Array.isArray(limiters) || limiters.length === 0)
    throw configError('limiters', 'must be a non-empty array of limiters');
  const map = new Map<string, Limiter>();
  for (const limiter of limiters) {
    if (typeof limiter?.reset !== 'function') throw configError('limiters', 'must come from createLimiter()');
    if (map.has(limiter.scope))
      throw configError('limiters', `has two limiters with scope "${limiter.scope}"`);
    map.set(limiter.scope, limiter);
  }
  return map;
}

/** The stores stats reads, each once; undefined when one of them cannot list its keys. */
function listableStores(
  store: Store | undefined,
  limiters: readonly Limiter[],
): { keys(): AsyncIterable<string> }[] | undefined {
  const stores = store === undefined ? [...new Set(limiters.map((limiter) => limiter.store))] : [store];
  if (stores.some((candidate) => typeof candidate.keys !== 'function')) return undefined;
  return stores as { keys(): AsyncIterable<string> }[];
}

function queryOf(target: string): URLSearchParams {
  const at = target.indexOf('?');
  return new URLSearchParams(at < 0 ? '' : target.slice(at + 1).split('#', 1)[0]);
}
