// What a rate limit request must hold before anything is counted, and the hits each of its descriptors adds.
import { argumentError } from '../../core/errors.js';
import type { RateLimitDescriptor, RateLimitRequest } from '../protocol/messages.js';

/**
 * Refuses (`ERR_TOLLGATE_ARGUMENT`, which the gRPC layer answers INVALID_ARGUMENT) what the reference refuses, an
 * empty domain or an empty descriptor list, and what Envoy's own validation never sends: a descriptor without
 * entries, an entry without a key, hits that are not a count, a string that is not well-formed Unicode.
 */
export function checkRequest(request: RateLimitRequest): void {
  if (typeof request.domain !== 'string' || request.domain === '')
    throw argumentError('rate limit domain must not be empty');
  checkUnicode('the rate limit domain', request.domain);
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
    checkUnicode(`descriptor ${index}, entry ${at}'s key`, entry.key);
    checkUnicode(`descriptor ${index}, entry ${at}'s value`, entry.value);
  });
  if (descriptor.hitsAddend !== undefined) checkHits(`descriptor ${index}`, descriptor.hitsAddend);
}

/**
 * A lone surrogate, which JSON can escape (`"\ud800"`) though no UTF-8 holds it, is refused here, for every
 * protocol, as gRPC's reader refuses bytes that are not UTF-8: keys, counters and metric labels are written as
 * UTF-8 (or percent-encoded), and such a string fails there, as a server error, rather than as the client's.
 */
function checkUnicode(what: string, text: string): void {
  if (LONE_SURROGATE.test(text)) throw argumentError(`${what} is not well-formed Unicode`);
}

/**
 * `!String.prototype.isWellFormed()`, which the ES2023 library types lack: read by code point (`u`), a pair is one
 * character outside the surrogate category, so only half a pair matches.
 */
const LONE_SURROGATE = /\p{Surrogate}/u;

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
