// The default tracker: a client address as @nestjs/throttler writes it, IPv6 grouped by its network prefix.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { ipv6Network } from '../../../identity/ipv6-network.js';

export const DEFAULT_IPV6_SUBNET_PREFIX = 64;

/**
 * IPv4 as is (a zone id dropped); `::1` as is; IPv4-mapped IPv6 (`::ffff:a.b.c.d`) as IPv4; other IPv6 (the
 * IPv4-compatible `::a.b.c.d` too) as its network, in its shortest spelling, with `/prefix`, so one subscriber's
 * many addresses share a count. Anything else unchanged.
 */
export function normalizeIp(ip: string, ipv6SubnetPrefix: number = DEFAULT_IPV6_SUBNET_PREFIX): string {
  if (typeof ip !== 'string' || ip.length === 0) return ip;
  const zone = ip.indexOf('%');
  const bare = zone === -1 ? ip : ip.slice(0, zone);
  const version = isIP(bare);
  if (version === 4) return bare;
  if (version !== 6) return ip;
  const address = ipaddr.IPv6.parse(hexTail(bare));
  const [a, b, c, d, e, f, g, h] = address.parts as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if ((a | b | c | d | e) === 0 && f === 0xffff) return address.toIPv4Address().toString();
  if ((a | b | c | d | e | f | g) === 0 && h === 1) return '::1';
  const prefix = Number.isFinite(ipv6SubnetPrefix)
    ? Math.min(Math.max(Math.trunc(ipv6SubnetPrefix), 0), 128)
    : DEFAULT_IPV6_SUBNET_PREFIX;
  return `${ipv6Network(address, prefix).toRFC5952String()}/${prefix}`;
}

/**
 * The address with a dotted IPv4 tail written as two groups: ipaddr.js reads `::a.b.c.d` as `::ffff:a.b.c.d`,
 * which would count an IPv4-compatible address as the IPv4 client it is not.
 */
function hexTail(address: string): string {
  const colon = address.lastIndexOf(':');
  const tail = address.slice(colon + 1);
  if (!tail.includes('.')) return address;
  const [a, b, c, d] = tail.split('.').map(Number) as [number, number, number, number];
  return `${address.slice(0, colon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}
