// The identity of a client address: IPv4 as is, IPv4-mapped IPv6 as IPv4, other IPv6 grouped by network prefix.
import { isIPv4 } from 'node:net';
import ipaddr from 'ipaddr.js';
import { configError } from '../core/errors.js';
import { ipv6Network } from './ipv6-network.js';

export interface AddressIdentityOptions {
  /**
   * IPv6 clients sharing this many leading bits share a bucket. Default 64: one subscriber is usually given a
   * whole /64 (or more), so per-address buckets would let them rotate through 2^64 fresh quotas.
   */
  readonly ipv6Prefix?: number;
}

/**
 * `'1.2.3.4'` stays `'1.2.3.4'`; `'::ffff:1.2.3.4'` (a dual-stack socket's view of an IPv4 client) becomes
 * `'1.2.3.4'`, so one client never holds two buckets; `'2001:db8:1:2:3:4:5:6'` becomes `'2001:db8:1:2::/64'`,
 * whatever its spelling (zero runs, a zone id). Anything else (not an IP address, or IPv4 in a form other than
 * the dotted quad a socket reports) comes back unchanged, and `undefined` (a closed socket) stays `undefined`.
 */
export function addressIdentity(
  address: string | undefined,
  options: AddressIdentityOptions = {},
): string | undefined {
  const prefix = options.ipv6Prefix ?? 64;
  if (!Number.isInteger(prefix) || prefix < 1 || prefix > 128)
    throw configError('ipv6Prefix', 'must be an integer from 1 to 128', prefix);
  // The common case costs one native check: a strict dotted quad is already its own canonical form.
  if (address === undefined || isIPv4(address) || !ipaddr.IPv6.isValid(address)) return address;
  const ipv6 = ipaddr.IPv6.parse(address);
  if (ipv6.isIPv4MappedAddress()) return ipv6.toIPv4Address().toString();
  return `${ipv6Network(ipv6, prefix).toString()}/${prefix}`;
}
