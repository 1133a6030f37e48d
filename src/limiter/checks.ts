// A limiter's checks of what it is given: its policies and block at wire-up, a request's cost on each call.
import { type Duration, parseDuration } from '../core/duration.js';
import { argumentError, configError } from '../core/errors.js';
import { MAX_SPAN } from '../core/validate.js';
import { LOCKOUT_NAME } from '../policies/lockout.js';
import { type AnyPolicy, missingDescription } from '../policies/policy.js';
import type { RetentionCap } from '../stores/store.js';

/** A per-call cost: a non-negative integer. */
export function units(cost: number): number {
  if (!Number.isSafeInteger(cost) || cost < 0) {
    throw argumentError(`the cost must be a non-negative integer (received ${cost})`);
  }
  return cost;
}

/** A block's length: whole ms from `least` up, within what both engines add to a clock exactly. */
export function blockDuration(option: string, value: Duration | 0, least: number): number {
  const ms = value === 0 && least === 0 ? 0 : parseDuration(option, value);
  if (ms >= MAX_SPAN) throw configError(option, 'must be below 2^51 ms', value);
  return ms;
}

/**
 * A block asked of `block()`: its length, refused when the store would forget it before it ends (a block dropped
 * early ends silently while its denials still announce the whole of it).
 */
export function requestedBlock(value: Duration, cap: RetentionCap | undefined): number {
  const ms = blockDuration('ms', value, 1);
  if (cap !== undefined && ms > cap.ms)
    throw argumentError(
      `\`ms\` (${ms}) must not exceed how long the store keeps a block (\`${cap.option}\`: ${cap.ms} ms), or the block would end early`,
    );
  return ms;
}

export function validatePolicies(policy: unknown): readonly AnyPolicy[] {
  const policies = Array.isArray(policy)
    ? (policy as readonly AnyPolicy[])
    : policy === undefined
      ? []
      : [policy as AnyPolicy];
  if (policies.length === 0)
    throw configError('policy', 'is required: a policy such as tokenBucket({...}), or an array of them');
  for (const p of policies) {
    if (typeof p?.evaluate !== 'function' || typeof p.kind !== 'string' || p.name === LOCKOUT_NAME) {
      throw configError(
        'policy',
        'must be created by tokenBucket(), fixedWindow(), slidingWindow(), slidingWindowCounter() or concurrency(), or be a Policy of your own',
      );
    }
    const missing = missingDescription(p);
    if (missing !== undefined) throw configError('policy', `"${p.kind}" must say ${missing}`);
  }
  const names = new Set(policies.map((p) => p.name));
  if (names.size !== policies.length)
    throw configError('policy', 'names must be unique within a limiter (set `name`)');
  return policies;
}
