// The admin bearer token check: constant time, and no different path for a missing, short or long token.
import { createHash, timingSafeEqual } from 'node:crypto';
import { configError } from '../core/errors.js';

/** Shorter tokens are guessable offline faster than the admin throttle can matter. */
export const MIN_TOKEN_LENGTH = 16;

/**
 * Returns a check of an `Authorization` header against `token`. Both sides are SHA-256 digests before
 * `timingSafeEqual`, so the comparison always runs over 32 bytes: the time taken says nothing about where a
 * guess first differs, nor about the token's length, and a missing header is compared like any other.
 */
export function bearerTokenCheck(token: string): (authorization: string | undefined) => boolean {
  if (typeof token !== 'string' || token.length < MIN_TOKEN_LENGTH)
    throw configError('token', `must be a string of at least ${MIN_TOKEN_LENGTH} characters`);
  const expected = sha256(token);
  return (authorization) => {
    const presented = /^Bearer (.*)$/i.exec(authorization ?? '')?.[1] ?? '';
    return timingSafeEqual(sha256(presented), expected);
  };
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
