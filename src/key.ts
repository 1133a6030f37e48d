// Bucket keys: `<scope>|<identifier>`, safe for any identifier and never able to pick a Redis Cluster slot.
import { createHash } from 'node:crypto';
import { configError, TollgateError } from './errors.js';
import type { AnyPolicy } from './policies/policy.js';

const SCOPE = /^[A-Za-z0-9._:-]{1,64}$/;
// Everything else (braces, '|', spaces, control characters, long strings) is hashed, so an identifier can
// neither inject a separator, nor choose a cluster hash tag, nor make keys unboundedly long.
const PLAIN_IDENTIFIER = /^[A-Za-z0-9._:@/+=-]{1,64}$/;

export function validateScope(scope: unknown): string {
  if (typeof scope !== 'string' || !SCOPE.test(scope)) {
    throw configError('scope', 'must be 1-64 characters of A-Z, a-z, 0-9, ".", "_", ":" or "-"', scope);
  }
  return scope;
}

/** A stable scope from the policies' parameters, so two different limits never share buckets by accident. */
export function defaultScope(policies: readonly AnyPolicy[]): string {
  const fingerprint = policies.map((p) => `${p.kind}/${p.name}/${p.args.join(',')}`).join(';');
  return `s-${createHash('sha256').update(fingerprint).digest('base64url').slice(0, 10)}`;
}

/** Plain identifiers stay readable; anything else becomes `~` + a hash ('~' never starts a plain one). */
export function encodeIdentifier(identifier: string): string {
  if (typeof identifier !== 'string' || identifier.length === 0) {
    throw new TollgateError('ERR_TOLLGATE_ARGUMENT', 'the identifier must be a non-empty string');
  }
  if (PLAIN_IDENTIFIER.test(identifier)) return identifier;
  return `~${createHash('sha256').update(identifier).digest('base64url').slice(0, 27)}`;
}

/**
 * One key per policy. A single policy uses `scope|id`; several share the hash tag `{scope|id}` so that a
 * Redis Cluster keeps them in one slot and one script can update them atomically.
 */
export function bucketKeys(scope: string, identifier: string, policies: readonly AnyPolicy[]): string[] {
  const base = `${scope}|${encodeIdentifier(identifier)}`;
  if (policies.length === 1) return [base];
  return policies.map((policy) => `{${base}}:${policy.name}`);
}
