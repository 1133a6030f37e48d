// GET blocks and POST unblock: the lockouts the limiters' stores hold, found by their keys, named only by keyed hash.
import type { IdentifierHasher } from '../identity/identifier-hash.js';
import type { Limiter } from '../limiter/limiter.js';
import { LOCKOUT_NAME } from '../policies/lockout.js';
import { parseBucketKey } from '../stores/key.js';
import type { Store } from '../stores/store.js';
import { MAX_LISTED_IDENTIFIERS } from './stats.js';

export interface AdminBlock {
  readonly scope: string;
  /** The keyed hash of the blocked client, as stats and bucket name it; what unblock takes. */
  readonly identifier: string;
}

export interface AdminBlocks {
  /** At most MAX_LISTED_IDENTIFIERS, by scope then identifier (code-unit order). */
  readonly blocks: readonly AdminBlock[];
  readonly truncated?: true;
}

/** A store that can list its keys, with the scopes of the limiters on it. */
type BlockSource = readonly [store: Store & { keys(): AsyncIterable<string> }, scopes: Set<string>];

/** What `identifierHasher` gives: 16 base64url characters. */
const HASH = /^[A-Za-z0-9_-]{16}$/;

export function isIdentifierHash(value: string): boolean {
  return HASH.test(value);
}

/**
 * The limiters' stores, each once, with the scopes to look for in it; undefined when one of them cannot list its
 * keys. Only the limiters' own scopes: a block is listed only where unblock can lift it.
 */
export function blockSources(limiters: readonly Limiter[]): BlockSource[] | undefined {
  const sources = new Map<Store, Set<string>>();
  for (const { store, scope } of limiters) {
    if (typeof store.keys !== 'function') return undefined;
    sources.set(store, (sources.get(store) ?? new Set()).add(scope));
  }
  return [...sources].map(([store, scopes]) => [store as BlockSource[0], scopes] as const);
}

/**
 * Lists the blocks: one pass over each store's keys, as stats makes, ended as soon as the listing is full. A
 * lockout key lives as long as its block (on RedisStore, for the store's TTL padding longer).
 */
export async function listBlocks(
  sources: readonly BlockSource[],
  hasher: IdentifierHasher,
): Promise<AdminBlocks> {
  const blocks: AdminBlock[] = [];
  let truncated = false;
  for await (const { scope, identifier } of lockouts(...sources)) {
    if (blocks.length === MAX_LISTED_IDENTIFIERS) {
      truncated = true;
      break;
    }
    blocks.push({ scope, identifier: hasher.hashStored(identifier) });
  }
  // Code-unit order: the same listing whatever the server's locale.
  blocks.sort((a, b) => compare(a.scope, b.scope) || compare(a.identifier, b.identifier));
  return truncated ? { blocks, truncated } : { blocks };
}

/** Lifts the block of the client `hash` names, in the source's scopes; false when there is none. */
export async function liftBlock(
  source: BlockSource,
  hash: string,
  hasher: IdentifierHasher,
): Promise<boolean> {
  let found: string | undefined;
  for await (const { key, identifier } of lockouts(source)) {
    if (hasher.hashStored(identifier) !== hash) continue;
    found = key;
    break;
  }
  // Outside the loop, so the scan is closed before the store is asked to change anything.
  if (found === undefined) return false;
  await source[0].reset([found]);
  return true;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The lockout keys of the sources' scopes, store after store, with each one's stored identifier. */
async function* lockouts(...sources: BlockSource[]): AsyncIterable<{
  key: string;
  scope: string;
  identifier: string;
}> {
  for (const [store, scopes] of sources) {
    for await (const key of store.keys()) {
      const parsed = parseBucketKey(key);
      if (parsed?.member === LOCKOUT_NAME && scopes.has(parsed.scope))
        yield { key, scope: parsed.scope, identifier: parsed.identifier };
    }
  }
}
