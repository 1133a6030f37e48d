// Bucket keys: `<scope>|<identifier>`, safe for any identifier and never able to pick a Redis Cluster slot.
import { createHash } from 'node:crypto';
import { argumentError, configError } from '../core/errors.js';
import type { AnyPolicy } from '../policies/policy.js';

const SCOPE = /^[A-Za-z0-9._:-]{1,64}$/;
// Everything else (braces, '|', spaces, control characters, long strings) is hashed, so an identifier can
// neither inject a separator, nor choose a cluster hash tag, nor make keys unboundedly long.
const PLAIN_IDENTIFIER = /^[A-Za-z0-9._:@/+=-]{1,64}$/;

/**
 * `name` as a scope when it spells one, else `fallback` and a hash of it: another library's namespace (a route's
 * URL, a throttler's name) becomes a scope without two names ever sharing one.
 */
export function scopeNamed(name: string, fallback: string): string {
  return SCOPE.test(name)
    ? name
    : `${fallback}${createHash('sha256').update(name).digest('base64url').slice(0, 16)}`;
}

export function validateScope(scope: unknown): string {
  if (typeof scope !== 'string' || !SCOPE.test(scope)) {
    throw configError('scope', 'must be 1-64 characters of A-Z, a-z, 0-9, ".", "_", ":" or "-"', scope);
  }
  return scope;
}

/**
 * A stable scope from the policies' parameters, so two different limits never share buckets by accident. 48 bits
 * of hash keep that chance negligible, and keep `tg:` + scope + `|` + any IPv4 address within 30 characters: the
 * 32-byte allocation Redis makes for such a key, where 10 characters of hash took it to 48 bytes.
 */
export function defaultScope(policies: readonly AnyPolicy[]): string {
  const fingerprint = policies.map((p) => `${p.kind}/${p.name}/${p.args.join(',')}`).join(';');
  return `s-${createHash('sha256').update(fingerprint).digest('base64url').slice(0, 8)}`;
}

/** Plain identifiers stay readable; anything else becomes `~` + a hash ('~' never starts a plain one). */
export function encodeIdentifier(identifier: string): string {
  if (typeof identifier !== 'string' || identifier.length === 0) {
    throw argumentError('the identifier must be a non-empty string');
  }
  if (PLAIN_IDENTIFIER.test(identifier)) return identifier;
  return `~${createHash('sha256').update(identifier).digest('base64url').slice(0, 27)}`;
}

/** Which of a limiter's policies a key belongs to: none when it is alone, since then the key is just `scope|id`. */
export function memberOf(policies: readonly AnyPolicy[], index: number): string | undefined {
  return policies.length === 1 ? undefined : (policies[index] as AnyPolicy).name;
}

/**
 * A bucket's key from an encoded identifier. A policy alone uses `scope|id`; one of several uses
 * `{scope|id}:member`, so that all of them share the hash tag `{scope|id}`, which keeps them in one Redis Cluster
 * slot where one script can update them atomically.
 */
export function bucketKey(scope: string, id: string, member: string | undefined): string {
  return member === undefined ? `${scope}|${id}` : `{${scope}|${id}}:${member}`;
}

/** Every key of a (raw) identifier under a limiter's scope and policies. */
export function bucketKeys(scope: string, identifier: string, policies: readonly AnyPolicy[]): string[] {
  const id = encodeIdentifier(identifier);
  return policies.map((_, index) => bucketKey(scope, id, memberOf(policies, index)));
}

export interface ParsedBucketKey {
  readonly scope: string;
  /** As stored: plain identifiers as given, others as `~` + hash (the raw identity is not recoverable). */
  readonly identifier: string;
  /** The policy's name when the key is one of several policies' (`{scope|id}:member`). */
  readonly member?: string;
}

/**
 * The inverse of `bucketKey`. Scopes never contain `|`, `{` or `}`, and stored identifiers never contain braces,
 * so the first `|` and the first `}` are the separators. Anything else (a foreign key under the same prefix) is
 * undefined.
 */
export function parseBucketKey(key: string): ParsedBucketKey | undefined {
  const close = key.startsWith('{') ? key.indexOf('}') : 0;
  if (close < 0 || (close > 0 && (key[close + 1] !== ':' || key.length === close + 2))) return undefined;
  const base = close === 0 ? key : key.slice(1, close);
  const bar = base.indexOf('|');
  if (bar <= 0 || bar === base.length - 1) return undefined;
  const scope = base.slice(0, bar);
  const identifier = base.slice(bar + 1);
  return close === 0 ? { scope, identifier } : { scope, identifier, member: key.slice(close + 2) };
}
