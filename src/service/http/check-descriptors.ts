// The descriptors an HTTP check stands for, built from the domain's rules as Envoy's rate limit actions build them.
import type { IncomingHttpHeaders } from 'node:http';
import { isIPv4 } from 'node:net';
import ipaddr from 'ipaddr.js';
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
 * appends the address it saw, so entries further left are the client's own word); X-Real-IP only when there is no
 * X-Forwarded-For; else the peer. Written one way whatever its spelling (see `canonicalAddress`).
 */
export function clientAddress(
  headers: IncomingHttpHeaders,
  trustedHops: number,
  peer: string | undefined,
): string | undefined {
  const forwarded = headerValue(headers, 'x-forwarded-for');
  const written =
    forwarded === undefined
      ? nonEmpty(headerValue(headers, 'x-real-ip'))
      : forwardedClient(forwarded, trustedHops);
  const address = written ?? peer;
  return address === undefined ? undefined : canonicalAddress(address);
}

/**
 * The entry past the trusted hops; when the header is shorter, or that entry empty, its leftmost non-empty entry:
 * the proxy closest to the client wrote it. Never X-Real-IP instead: the client can set that header, and what a
 * trusted proxy wrote must win over anything the client sets.
 */
function forwardedClient(forwarded: string, trustedHops: number): string | undefined {
  const entries = forwarded.split(',').map((entry) => entry.trim());
  return nonEmpty(entries[entries.length - 1 - trustedHops]) ?? entries.find((entry) => entry !== '');
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === '' ? undefined : trimmed;
}

/**
 * One client, one value: `1.2.3.4:5678` (as Azure writes it) is 1.2.3.4, `[2001:DB8::1]:443` is 2001:db8::1 (IPv6
 * in its short lower-case form), `::ffff:10.0.0.1` (a dual-stack socket's view of an IPv4 client) is 10.0.0.1;
 * what is not an address stays as written.
 */
function canonicalAddress(written: string): string {
  const bare = withoutPort(written);
  if (isIPv4(bare)) return bare;
  if (!ipaddr.IPv6.isValid(bare)) return written;
  const ipv6 = ipaddr.IPv6.parse(bare);
  return ipv6.isIPv4MappedAddress() ? ipv6.toIPv4Address().toString() : ipv6.toString();
}

/** An IPv4 address less its `:port`, an IPv6 one less its brackets and port. */
function withoutPort(address: string): string {
  const match = /^\[([^\]]+)\](?::\d+)?$/.exec(address) ?? /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(address);
  return match?.[1] ?? address;
}
