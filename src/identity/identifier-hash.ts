// Keyed hashes of client identities, so logs and admin output can be correlated without naming anyone.
import { createHmac, randomBytes } from 'node:crypto';
import { encodeIdentifier } from '../stores/key.js';

export interface IdentifierHasher {
  /** The hash of an identity as a limiter is given it (`'1.2.3.4'`, `apiKeyId(key)`). */
  hash(identity: string): string;
  /** The hash of the identifier part of a bucket key, as stored: the same value `hash` gives its identity. */
  hashStored(encoded: string): string;
}

/**
 * Keyed (HMAC-SHA256), because a plain hash of an IPv4 address is undone by hashing all 2^32 of them. Hashes
 * agree wherever the secret is the same (give every instance one secret to correlate across a fleet); the
 * default secret is random per process. Hashing the stored form lets a bucket key whose identifier was itself
 * hashed (`~...`) be matched to the identity it came from.
 */
export function identifierHasher(secret: string | Uint8Array = randomBytes(32)): IdentifierHasher {
  const hashStored = (encoded: string) =>
    createHmac('sha256', secret).update(encoded).digest('base64url').slice(0, 16);
  return { hashStored, hash: (identity) => hashStored(encodeIdentifier(identity)) };
}
