// The descriptors an HTTP check stands for, built from the domain's rules as Envoy's rate limit actions build them.
import type { IncomingHttpHeaders } from 'node:http';
import type { HttpCheckRules, HttpEntryRule } from '../config/types.js';
import type { Entry, RateLimitDescriptor } from '../protocol/messages.js';

/** What the rules read of a request: its headers (names in lower case, as node:http gives them) and its peer. */
export interface CheckedRequest {
  readonly headers: IncomingHttpHeaders;
  /** The socket's remote address. */
  readonly peer: string | undefined;
}

/**
 * One descriptor per rule whose every value is there. As Envoy's actions do, a rule drops its whole descriptor
 * when a value is missing (a `request_header` whose header is absent, unless `skipIfAbsent` skips just its entry),
 * and a descriptor left with no entries is not sent.
 */
export function checkDescriptors(rules: HttpCheckRules, request: CheckedRequest): RateLimitDescriptor[] {
  const descriptors: RateLimitDescriptor[] = [];
  for (const rule of rules.descriptors) {
    const entries: Entry[] = [];
    let complete = true;
    for (const entryRule of rule.entries) {
      const value = entryValue(entryRule, request);
      if (value !== undefined) entries.push({ key: entryRule.key, value });
      else if (!(entryRule.type === 'request_header' && entryRule.skipIfAbsent)) complete = false;
    }
    if (complete && entries.length > 0) descriptors.push({ entries });
  }
  return descriptors;
}

function entryValue(rule: HttpEntryRule, { headers, peer }: CheckedRequest): string | undefined {
  if (rule.type === 'generic_key') return rule.value;
  if (rule.type === 'request_header') return headerValue(headers, rule.header);
  return clientAddress(headers, rule.trustedHops, peer);
}

/** A header's value; repeated, its values joined by `, ` as they would be in one line. */
function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * The client's address: the X-Forwarded-For entry `trustedHops` places from its right end (each trusted proxy
 * appends the address it saw, so entries further left are the client's own word), else X-Real-IP, else the peer.
 */
export function clientAddress(
  headers: IncomingHttpHeaders,
  trustedHops: number,
  peer: string | undefined,
): string | undefined {
  const forwarded = headerValue(headers, 'x-forwarded-for')?.split(',') ?? [];
  const hop = forwarded[forwarded.length - 1 - trustedHops]?.trim();
  if (hop !== undefined && hop !== '') return hop;
  const realIp = headerValue(headers, 'x-real-ip')?.trim();
  if (realIp !== undefined && realIp !== '') return realIp;
  return peer === undefined ? undefined : unmapped(peer);
}

/** An IPv4 peer of a dual-stack socket as IPv4 (`::ffff:10.0.0.1` is 10.0.0.1), as the client's proxy wrote it. */
function unmapped(address: string): string {
  return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address) ? address.slice(7) : address;
}
