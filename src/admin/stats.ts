// GET stats: how many buckets each scope holds and for how many clients, never naming a client.
import type { IdentifierHasher } from '../identity/identifier-hash.js';
import { parseBucketKey } from '../stores/key.js';

/** Hashed identifiers listed per scope at most: enough to correlate, bounded however large the store grows. */
export const MAX_LISTED_IDENTIFIERS = 1000;

export interface ScopeStats {
  readonly keys: number;
  /** Distinct clients (a multi-policy limiter holds several keys per client). */
  readonly clients: number;
  /** Keyed hashes of the clients, when asked for; at most MAX_LISTED_IDENTIFIERS. */
  readonly identifiers?: readonly string[];
  readonly identifiersTruncated?: true;
}

export interface AdminStats {
  readonly keys: number;
  readonly clients: number;
  readonly scopes: Record<string, ScopeStats>;
  /** Keys under the store's prefix that are no bucket key. */
  readonly unrecognised: number;
}

export async function collectStats(
  stores: readonly { keys(): AsyncIterable<string> }[],
  hasher: IdentifierHasher | undefined,
): Promise<AdminStats> {
  let keys = 0;
  let unrecognised = 0;
  const clients = new Set<string>();
  const perScope = new Map<string, { keys: number; clients: Set<string> }>();
  for (const store of stores) {
    for await (const key of store.keys()) {
      keys++;
      const parsed = parseBucketKey(key);
      if (parsed === undefined) {
        unrecognised++;
        continue;
      }
      let scope = perScope.get(parsed.scope);
      if (scope === undefined) {
        scope = { keys: 0, clients: new Set() };
        perScope.set(parsed.scope, scope);
      }
      scope.keys++;
      scope.clients.add(parsed.identifier);
      clients.add(parsed.identifier);
    }
  }
  const scopes: Record<string, ScopeStats> = {};
  for (const [name, scope] of [...perScope].sort(([a], [b]) => a.localeCompare(b))) {
    scopes[name] = { keys: scope.keys, clients: scope.clients.size, ...listed(scope.clients, hasher) };
  }
  return { keys, clients: clients.size, scopes, unrecognised };
}

function listed(clients: Set<string>, hasher: IdentifierHasher | undefined): Partial<ScopeStats> {
  if (hasher === undefined) return {};
  const identifiers = [...clients].slice(0, MAX_LISTED_IDENTIFIERS).map((id) => hasher.hashStored(id));
  return clients.size > MAX_LISTED_IDENTIFIERS
    ? { identifiers, identifiersTruncated: true }
    : { identifiers };
}
