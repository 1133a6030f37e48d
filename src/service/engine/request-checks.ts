// What a rate limit request must hold before anything is counted, and the hits each of its descriptors adds.
import { argumentError } from '../../core/errors.js';
import type { RateLimitDescriptor, RateLimitRequest } from '../protocol/messages.js';

/**
 * Refuses (`ERR_TOLLGATE_ARGUMENT`, which the gRPC layer answers INVALID_ARGUMENT) what the reference refuses, an
 * empty domain or an empty descriptor list, and what Envoy's own validation never sends: a descriptor without
 * entries, an entry without a key, hits that are not a count.
 */
export function checkRequest(request: RateLimitRequest): void {
  if (typeof request.domain !== 'string' || request.domain === '')
    throw argumentError('rate limit domain must not be empty');
  if (!Array.isArray(request.descriptors) || request.descriptors.length === 0)
    throw argumentError('rate limit descriptor list must not be empty');
  checkHits('the request', request.hitsAddend);
  request.descriptors.forEach(checkDescriptor);
}

function checkDescriptor(descriptor: RateLimitDescriptor, index: number): void {
  if (!Array.isArray(descriptor.entries) || descriptor.entries.length === 0)
    throw argumentError(`descriptor ${index} has no entries`);
  descriptor.entries.forEach((entry, at) => {
    if (typeof entry.key !== 'string' || entry.key === '')
      throw argumentError(`descriptor ${index}, entry ${at} has an empty key`);
    if (typeof entry.value !== 'string')
      throw argumentError(`descriptor ${index}, entry ${at} has a value that is not a string`);
  });
  if (descriptor.hitsAddend !== undefined) checkHits(`descriptor ${index}`, descriptor.hitsAddend);
}

function checkHits(whose: string, hits: number): void {
  if (!Number.isSafeInteger(hits) || hits < 0)
    throw argumentError(`${whose}'s hits_addend must be a non-negative integer (received ${hits})`);
}

/**
 * The hits a descriptor adds, as the reference reads them: its own when set, 0 included (a check that adds
 * nothing), else the request's, where 0 (unset) means 1.
 */
export function hitsOf(request: RateLimitRequest, descriptor: RateLimitDescriptor): number {
  return descriptor.hitsAddend ?? Math.max(1, request.hitsAddend);
}
