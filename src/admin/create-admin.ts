// The admin endpoints as one framework-free handler: bearer auth in constant time, throttled, and no identifier in the clear.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Duration, parseDuration } from '../core/duration.js';
import { configError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { knownKeys, loggerOption, optionalFunction, positiveInteger } from '../core/validate.js';
import type { Decision } from '../decision/decision.js';
import { addressIdentity } from '../identity/address-identity.js';
import { identifierHasher } from '../identity/identifier-hash.js';
import { createLimiter, type Limiter } from '../limiter/limiter.js';
import { fixedWindow } from '../policies/fixed-window.js';
import { MemoryStore } from '../stores/memory/memory-store.js';
import type { Store } from '../stores/store.js';
import { type AdminRoute, adminRoute, DEFAULT_ADMIN_BASE_PATH, normalizedPath } from './admin-path.js';
import { bearerTokenCheck } from './bearer-token.js';
import { blockSources, isIdentifierHash, liftBlock, listBlocks } from './blocks.js';
import { collectStats } from './stats.js';

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

interface Answer {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Record<string, string>;
}

const UNAUTHORIZED: Answer = {
  status: 401,
  body: { error: 'Unauthorized' },
  headers: { 'WWW-Authenticate': 'Bearer' },
};
const NOT_FOUND: Answer = { status: 404, body: { error: 'Not Found' } };
const CANNOT_LIST: Answer = {
  status: 501,
  body: { error: 'the store cannot list its keys (it has no keys())' },
};

export function createAdmin(options: AdminOptions): AdminHandler {
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

  /** The limiter `?scope=` names: undefined when there is no `?scope=`, null when no limiter has that scope. */
  const scoped = (query: URLSearchParams): Limiter | null | undefined => {
    const scope = query.get('scope');
    return scope === null ? undefined : (limiters.get(scope) ?? null);
  };

  const route = async (method: string, target: AdminRoute, query: URLSearchParams): Promise<Answer> => {
    if (target.action === 'unknown') return NOT_FOUND;
    if (target.action === 'stats') {
      if (method !== 'GET') return methodNotAllowed('GET');
      if (listable === undefined) return CANNOT_LIST;
      const hashed = query.get('identifiers') === 'hashed';
      return { status: 200, body: await collectStats(listable, hashed ? hasher : undefined) };
    }
    if (target.action === 'blocks') {
      if (method !== 'GET') return methodNotAllowed('GET');
      const chosen = scoped(query);
      if (chosen === null) return noSuchScope(limiters);
      const sources = blockSources(chosen === undefined ? [...limiters.values()] : [chosen]);
      return sources === undefined ? CANNOT_LIST : { status: 200, body: await listBlocks(sources, hasher) };
    }
    if (target.action === 'unblock') {
      // By the hash blocks lists: a stored identifier cannot be turned back into the identity it came from.
      if (!isIdentifierHash(target.identifier))
        return { status: 400, body: { error: 'the identifier must be a hash as blocks lists it' } };
      const chosen = scoped(query);
      if (chosen === null) return noSuchScope(limiters);
      if (method !== 'POST') return methodNotAllowed('POST');
      if (chosen === undefined) return scopeRequired(limiters);
      const source = blockSources([chosen])?.[0];
      if (source === undefined) return CANNOT_LIST;
      const unblocked = await liftBlock(source, target.identifier, hasher);
      return { status: 200, body: { scope: chosen.scope, identifier: target.identifier, unblocked } };
    }
    const identity = identityOf(target.identifier, identify);
    if (identity === undefined) return { status: 400, body: { error: 'the identifier is not valid' } };
    const chosen = scoped(query);
    if (chosen === null) return noSuchScope(limiters);
    const identifier = hasher.hash(identity);
    if (target.action === 'reset') {
      if (method !== 'POST') return methodNotAllowed('POST');
      const cleared = chosen === undefined ? [...limiters.values()] : [chosen];
      await Promise.all(cleared.map((limiter) => limiter.reset(identity)));
      return { status: 200, body: { identifier, reset: cleared.map((limiter) => limiter.scope) } };
    }
    if (method !== 'GET') return methodNotAllowed('GET');
    if (chosen === undefined) return scopeRequired(limiters);
    // Cost 0: the balance as it stands, without asking for (or spending) a unit.
    return {
      status: 200,
      body: bucketBody(chosen.scope, identifier, await chosen.peek(identity, { cost: 0 })),
    };
  };

  const answer = async (req: IncomingMessage, target: AdminRoute): Promise<Answer> => {
    const client = addressIdentity(clientAddress(req)) ?? 'unknown';
    // Every attempt spends before the token is even looked at, so parallel guesses cannot outrun the count;
    // a success then clears it. A blocked client gets 429 whatever it sends, or the status would tell it
    // which guess was right.
    const attempt = await failures.consume(client);
    if (!attempt.allowed) return tooManyAttempts(attempt);
    if (!authorized(req.headers.authorization)) return UNAUTHORIZED;
    await failures.reset(client);
    try {
      return await route(req.method ?? 'GET', target, queryOf(req.url ?? '/'));
    } catch (error) {
      logger.error(error, '[tollgate] admin request failed');
      return { status: 503, body: { error: 'the store could not answer' } };
    }
  };

  return async (req, res) => {
    // Every spelling of an admin path is answered here (`/api/admin/./reset/...` is the reset route), so none
    // slips past to the application, and the request log reads paths the same way.
    const target = adminRoute(req.url ?? '/', basePath);
    if (target === undefined) return false;
    const { status, body, headers = {} } = await answer(req, target);
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

function identityOf(
  encoded: string,
  identify: (identifier: string) => string | undefined,
): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(encoded);
  } catch {
    return undefined;
  }
  const identity = identify(decoded);
  return typeof identity === 'string' && identity !== '' ? identity : undefined;
}

function bucketBody(scope: string, identifier: string, decision: Decision): unknown {
  return {
    scope,
    identifier,
    limit: decision.limit,
    remaining: decision.remaining,
    resetMs: decision.resetMs,
    ...(decision.degraded === undefined ? {} : { degraded: decision.degraded }),
    policies: decision.policies.map(({ policy, remaining, resetMs }) => ({
      name: policy.name,
      kind: policy.kind,
      limit: policy.limit,
      remaining,
      resetMs,
    })),
  };
}

function noSuchScope(limiters: Map<string, Limiter>): Answer {
  return { status: 404, body: { error: 'no limiter has that scope', scopes: [...limiters.keys()] } };
}

function scopeRequired(limiters: Map<string, Limiter>): Answer {
  return { status: 400, body: { error: 'give ?scope=', scopes: [...limiters.keys()] } };
}

function methodNotAllowed(allow: string): Answer {
  return { status: 405, body: { error: 'Method Not Allowed' }, headers: { Allow: allow } };
}

function tooManyAttempts(decision: Decision): Answer {
  const seconds = Math.max(1, Math.ceil((decision.retryAfterMs ?? 1000) / 1000));
  return { status: 429, body: { error: 'Too Many Requests' }, headers: { 'Retry-After': String(seconds) } };
}
