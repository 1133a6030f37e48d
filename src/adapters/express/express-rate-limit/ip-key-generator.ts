// express-rate-limit's address key: IPv4 as is, IPv4 inside IPv6 as IPv4, other IPv6 by its network prefix.
import { isIPv6 } from 'node:net';
import { argumentError } from '../../../core/errors.js';
import { addressIdentity } from '../../../identity/address-identity.js';

/**
 * The helper for a `keyGenerator` that falls back to the address: IPv4 as is, IPv6 as its /`ipv6Subnet` network in
 * CIDR notation (false or 0: the address itself), so one subscriber's many addresses share a key.
 *
 * @example
 * keyGenerator: (req) => req.get('x-api-key') ?? ipKeyGenerator(req.ip ?? '', 56)
 */
export function ipKeyGenerator(ip: string, ipv6Subnet: number | false = 56): string {
  if (!isIPv6(ip)) return ip;
  if (!ipv6Subnet) {
    // Each IPv6 address alone, written as given, but an IPv4 client seen through a dual-stack socket as IPv4.
    const address = addressIdentity(ip, { ipv6Prefix: 128 });
    return address === undefined || address.endsWith('/128') ? ip : address;
  }
  if (!Number.isInteger(ipv6Subnet) || ipv6Subnet < 1 || ipv6Subnet > 128)
    throw argumentError(`\`ipv6Subnet\` must be an integer from 1 to 128, or false (received ${ipv6Subnet})`);
  return addressIdentity(ip, { ipv6Prefix: ipv6Subnet }) ?? ip;
}
