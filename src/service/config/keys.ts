// The names a limit is counted and measured by: its counters' scope, a request's counter key, the stats keys.
import { createHash } from 'node:crypto';
import type { AnyPolicy } from '../../policies/policy.js';
import { scopeNamed } from '../../stores/key.js';
import type { Entry } from '../protocol/messages.js';

/** Keeps `.` and `:` as separators only, so that two different paths never spell one scope. */
function escapePart(part: string): string {
  return part.replace(/%/g, '%25').replace(/\./g, '%2E').replace(/:/g, '%3A');
}

/**
 * A configured limit's scope: its domain, its path of composite keys (`key` or `key_value`, as the reference names
 * levels) and the kinds and names of its policies, not their numbers, so a reload that changes a limit keeps its
 * counts, and one that changes what counts them starts afresh. Readable when short and plain, else hashed.
 */
export function ruleScope(domain: string, path: readonly string[], policies: readonly AnyPolicy[]): string {
  const where = [domain, ...path].map(escapePart).join('.');
  const what = policies.map((policy) => `${escapePart(policy.kind)}.${escapePart(policy.name)}`).join(':');
  return scopeNamed(`${where}:${what}`, 'rls-');
}

/** The scope of the limits a request sets itself (`descriptor.limit`), per domain and unit. */
export function overrideScope(domain: string, unitName: string): string {
  return scopeNamed(`${escapePart(domain)}:override:${unitName}`, 'rls-');
}

/**
 * A request's counter within its limit's scope: `key=value` per entry, each part percent-encoded, joined by `|`;
 * where a shared wildcard matched, its pattern stands for the value, so every value past it counts together.
 */
export function counterKey(entries: readonly Entry[], patterns: readonly (string | undefined)[]): string {
  return entries
    .map(
      (entry, index) =>
        `${encodeURIComponent(entry.key)}=${encodeURIComponent(patterns[index] ?? entry.value)}`,
    )
    .join('|');
}

/** The reference's stats key of a request's own entries: `domain.key_value.key2` (an empty value leaves `key`). */
export function descriptorKey(domain: string, entries: readonly Entry[]): string {
  return statsKeyOf(
    domain,
    entries.map((entry) => keyValue(entry.key, entry.value)),
  );
}

/** The longest part (`key_value`) a stats key holds as it is. */
const MAX_STATS_PART = 64;
/** The longest stats key: a request may send hundreds of entries, each a part. */
const MAX_STATS_KEY = 256;

/**
 * A stats key, `domain.part.part`, each part longer than 64 characters, then the whole key past 256, written as its
 * start, `~` and 8 base64url characters of its SHA-256. Request values become metric labels, kept for the life of
 * the process and written on every scrape: unbounded, a client could make them hold any memory and make /metrics
 * too large to scrape. The start keeps a key readable; the hash keeps distinct values apart (48 bits: a collision
 * only merges two series). Configured and requested keys go through the same function, so they still compare equal.
 */
export function statsKeyOf(domain: string, parts: readonly string[]): string {
  const key = [domain, ...parts.map((part) => shortened(part, MAX_STATS_PART))].join('.');
  return shortened(key, MAX_STATS_KEY);
}

/** Room for `~` and the 8 characters of the hash. */
const HASH_SUFFIX_LENGTH = 9;

function shortened(text: string, max: number): string {
  if (text.length <= max) return text;
  const digest = createHash('sha256').update(text).digest('base64url').slice(0, 8);
  let start = text.slice(0, max - HASH_SUFFIX_LENGTH);
  // Never half a surrogate pair: a label must stay well-formed UTF-8.
  if (/[\uD800-\uDBFF]$/.test(start)) start = start.slice(0, -1);
  return `${start}~${digest}`;
}

/** `key_value`, or `key` alone when the value is empty: how the reference names a level. */
export function keyValue(key: string, value: string): string {
  return value === '' ? key : `${key}_${value}`;
}
