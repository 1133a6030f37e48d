// The default key: the client address, lower case, IPv4-mapped IPv6 as IPv4, other IPv6 by its network prefix.
import { isIPv6 } from 'node:net';
import ipaddr from 'ipaddr.js';
import { ipv6Network } from '../../../identity/ipv6-network.js';

/** Bits of an IPv6 address that name one client: a subscriber is usually given a whole /64. */
const DEFAULT_IPV6_SUBNET = 64;
/** A dotted IPv4 address ending an IPv6 address, each of its four numbers captured. */
const DOTTED_TAIL = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/;

/**
 * The key @fastify/rate-limit gives an address: anything but IPv6 in lower case; `::ffff:1.2.3.4` as
 * `1.2.3.4`; other IPv6, `::1.2.3.4` too, as the first address of its `/ipv6Subnet` network in RFC 5952's form,
 * without a zone id.
 */
export function normalizeIP(ip: string, ipv6Subnet = DEFAULT_IPV6_SUBNET): string {
  if (!isIPv6(ip)) return ip.toLowerCase();
  const address = ipaddr.IPv6.parse(groups(ip));
  if (address.isIPv4MappedAddress()) return address.toIPv4Address().toString();
  return (ipv6Subnet < 128 ? ipv6Network(address, ipv6Subnet) : address).toRFC5952String();
}

/**
 * The address without its zone id, a dotted IPv4 ending written as two groups: ipaddr.js reads `::1.2.3.4` as
 * `::ffff:1.2.3.4`, an IPv4 client, where the plugin, as RFC 4291, sees the IPv6 address `::102:304`.
 */
function groups(ip: string): string {
  const bare = ip.split('%', 1)[0] as string;
  return bare.replace(DOTTED_TAIL, (_tail, a: string, b: string, c: string, d: string) => {
    const group = (high: string, low: string) => ((Number(high) << 8) | Number(low)).toString(16);
    return `${group(a, b)}:${group(c, d)}`;
  });
}

/** `ipv6Subnet` as the plugin reads it: a whole number of bits from 0 to 128, else the default. */
export function ipv6SubnetOf(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 128
    ? Math.trunc(value)
    : DEFAULT_IPV6_SUBNET;
}
