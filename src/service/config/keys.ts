// The names a limit is counted and measured by: its counters' scope, a request's counter key, the stats keys.
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
  return [domain, ...entries.map((entry) => keyValue(entry.key, entry.value))].join('.');
}

/** `key_value`, or `key` alone when the value is empty: how the reference names a level. */
export function keyValue(key: string, value: string): string {
  return value === '' ? key : `${key}_${value}`;
}
