// The client's address as express-rate-limit keys it: IPv4 as is, IPv6 grouped by a network prefix.
import { isIPv6 } from 'node:net';
import type { Request, Response } from 'express';
import { configError } from '../../../core/errors.js';
import { addressIdentity } from '../../../identity/address-identity.js';
import type { Identity } from '../../../identity/identity.js';
import type { ExpressRateLimitCompatOptions } from './types.js';

type IPv6Subnet = ExpressRateLimitCompatOptions['ipv6Subnet'];

/** express-rate-limit's default key: the address, IPv4-mapped IPv6 as IPv4, other IPv6 by its network. */
export function clientAddress(
  subnet: NonNullable<IPv6Subnet>,
): (req: Request) => Identity | Promise<Identity> {
  // As express-rate-limit does, a subnet function is asked only for an IPv6 client.
  if (typeof subnet === 'function')
    return async (req) =>
      grouped(req.ip, isIPv6(req.ip ?? '') && checkedSubnet(await subnet(req, req.res as Response)));
  const bits = checkedSubnet(subnet);
  return (req) => grouped(req.ip, bits);
}

/**
 * express-rate-limit's helper for a `keyGenerator` that falls back to the address: IPv4 as is, IPv6 as its
 * /`ipv6Subnet` network in CIDR notation (false: the address itself), so one subscriber's addresses share a key.
 *
 * @example
 * keyGenerator: (req) => req.get('x-user-id') ?? ipKeyGenerator(req.ip ?? '', 56)
 */
export function ipKeyGenerator(ip: string, ipv6Subnet: number | false = 56): string {
  return grouped(ip, checkedSubnet(ipv6Subnet)) || ip;
}

function checkedSubnet(bits: unknown): number | false {
  if (bits === false || (Number.isInteger(bits) && (bits as number) >= 1 && (bits as number) <= 128))
    return bits as number | false;
  throw configError('ipv6Subnet', 'must be an integer from 1 to 128, or false', bits);
}

function grouped(ip: string | undefined, bits: number | false): Identity {
  if (bits !== false) return addressIdentity(ip, { ipv6Prefix: bits });
  // Each IPv6 address alone, but an IPv4 client seen through a dual-stack socket still as IPv4.
  const address = addressIdentity(ip, { ipv6Prefix: 128 });
  return address?.endsWith('/128') ? ip : address;
}
