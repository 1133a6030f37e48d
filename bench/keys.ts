// Deterministic client identifiers for every section, so runs compare like with like.

/** IPv4-style identifiers, distinct, as a limiter keyed by client address sees them. */
export function addressIdentity(i: number): string {
  return `10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`;
}

/** A fixed pseudo-random sequence (xorshift32) of `length` draws from `count` distinct keys. */
export function keySequence(count: number, length: number, seed = 0x9e3779b9): string[] {
  const keys = Array.from({ length: count }, (_, i) => addressIdentity(i));
  const sequence: string[] = [];
  let x = seed;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    sequence.push(keys[(x >>> 0) % count] as string);
  }
  return sequence;
}
