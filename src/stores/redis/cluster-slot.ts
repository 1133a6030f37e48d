// Redis Cluster's key-to-slot function (CRC16/XMODEM of the hash tag, mod 16384), to know which master owns a key.

const TABLE = Uint16Array.from({ length: 256 }, (_, byte) => {
  let crc = byte << 8;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
  return crc & 0xffff;
});

/** The slot Redis Cluster assigns to `key`: only the first non-empty `{...}` is hashed when there is one. */
export function clusterSlot(key: string): number {
  let crc = 0;
  for (const byte of Buffer.from(hashed(key)))
    crc = ((crc << 8) ^ (TABLE[((crc >> 8) ^ byte) & 0xff] as number)) & 0xffff;
  return crc % 16_384;
}

/**
 * `<prefix>{<what key hashes>}`: a key of one's own on the node that owns `key`, for a probe of that node. Bucket
 * keys hold no `}` outside their hash tag, so the braces here enclose exactly what `key` hashes.
 */
export function keyBeside(key: string, prefix: string): string {
  return `${prefix}{${hashed(key)}}`;
}

/** The part of `key` that decides its slot. */
function hashed(key: string): string {
  const open = key.indexOf('{');
  if (open === -1) return key;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}
