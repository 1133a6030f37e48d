// The first address of an IPv6 address's network: the part of the address that names one subscriber.
import ipaddr from 'ipaddr.js';

/** `address` with every bit past the first `prefix` cleared (`prefix` from 0 to 128). */
export function ipv6Network(address: ipaddr.IPv6, prefix: number): ipaddr.IPv6 {
  const bytes = address.toByteArray();
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.min(8, Math.max(0, prefix - i * 8));
    bytes[i] = (bytes[i] as number) & ((0xff << (8 - keep)) & 0xff);
  }
  return ipaddr.fromByteArray(bytes) as ipaddr.IPv6;
}
