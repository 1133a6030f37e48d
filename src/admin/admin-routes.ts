// What each admin route answers once a request is authorized: stats, blocks, unblock, reset and bucket.
import type { Decision } from '../decision/decision.js';
import type { IdentifierHasher } from '../identity/identifier-hash.js';
import type { Limiter } from '../limiter/limiter.js';
import type { AdminRoute } from './admin-path.js';
import { blockSources, isIdentifierHash, liftBlock, listBlocks } from './blocks.js';
import { collectStats } from './stats.js';

export interface Answer {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Record<string, string>;
}

/** What the routes act on, resolved once from the admin options. */
export interface Routing {
  /** The limiters, by scope. */
  readonly limiters: Map<string, Limiter>;
  /** The stores stats reads; undefined when one of them cannot list its keys. */
  readonly listable: { keys(): AsyncIterable<string> }[] | undefined;
  readonly hasher: IdentifierHasher;
  readonly identify: (identifier: string) => string | undefined;
}

export const UNAUTHORIZED: Answer = {
  status: 401,
  body: { error: 'Unauthorized' },
  headers: { 'WWW-Authenticate': 'Bearer' },
};
const NOT_FOUND: Answer = { status: 404, body: { error: 'Not Found' } };
const CANNOT_LIST: Answer = {
  status: 501,
  body: { error: 'the store cannot list its keys (it has no keys())' },
};

export async function route(
  routing: Routing,
  method: string,
  target: AdminRoute,
  query: URLSearchParams,
): Promise<Answer> {
  if (target.action === 'unknown') return NOT_FOUND;
  if (target.action === 'stats') return stats(routing, method, query);
  if (target.action === 'blocks') return blocks(routing, method, query);
  if (target.action === 'unblock') return unblock(routing, method, target.identifier, query);
  return byIdentity(routing, method, target.action, target.identifier, query);
}

async function stats({ listable, hasher }: Routing, method: string, query: URLSearchParams): Promise<Answer> {
  if (method !== 'GET') return methodNotAllowed('GET');
  if (listable === undefined) return CANNOT_LIST;
  const hashed = query.get('identifiers') === 'hashed';
  return { status: 200, body: await collectStats(listable, hashed ? hasher : undefined) };
}

async function blocks(
  { limiters, hasher }: Routing,
  method: string,
  query: URLSearchParams,
): Promise<Answer> {
  if (method !== 'GET') return methodNotAllowed('GET');
  const chosen = scoped(limiters, query);
  if (chosen === null) return noSuchScope(limiters);
  const sources = blockSources(chosen === undefined ? [...limiters.values()] : [chosen]);
  return sources === undefined ? CANNOT_LIST : { status: 200, body: await listBlocks(sources, hasher) };
}

async function unblock(
  { limiters, hasher }: Routing,
  method: string,
  identifier: string,
  query: URLSearchParams,
): Promise<Answer> {
  // By the hash blocks lists: a stored identifier cannot be turned back into the identity it came from.
  if (!isIdentifierHash(identifier))
    return { status: 400, body: { error: 'the identifier must be a hash as blocks lists it' } };
  const chosen = scoped(limiters, query);
  if (chosen === null) return noSuchScope(limiters);
  if (method !== 'POST') return methodNotAllowed('POST');
  if (chosen === undefined) return scopeRequired(limiters);
  const source = blockSources([chosen])?.[0];
  if (source === undefined) return CANNOT_LIST;
  const unblocked = await liftBlock(source, identifier, hasher);
  return { status: 200, body: { scope: chosen.scope, identifier, unblocked } };
}

/** reset and bucket: routes named by an identity, which the URL carries in the clear. */
async function byIdentity(
  { limiters, hasher, identify }: Routing,
  method: string,
  action: 'reset' | 'bucket',
  encoded: string,
  query: URLSearchParams,
): Promise<Answer> {
  const identity = identityOf(encoded, identify);
  if (identity === undefined) return { status: 400, body: { error: 'the identifier is not valid' } };
  const chosen = scoped(limiters, query);
  if (chosen === null) return noSuchScope(limiters);
  const identifier = hasher.hash(identity);
  if (action === 'reset') {
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
}

/** The limiter `?scope=` names: undefined when there is no `?scope=`, null when no limiter has that scope. */
function scoped(limiters: Map<string, Limiter>, query: URLSearchParams): Limiter | null | undefined {
  const scope = query.get('scope');
  return scope === null ? undefined : (limiters.get(scope) ?? null);
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

export function tooManyAttempts(decision: Decision): Answer {
  const seconds = Math.max(1, Math.ceil((decision.retryAfterMs ?? 1000) / 1000));
  return { status: 429, body: { error: 'Too Many Requests' }, headers: { 'Retry-After': String(seconds) } };
}
