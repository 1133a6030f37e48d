// The built-in policies, their Lua twins by kind (the twins every Redis engine carries) and their descriptions.
import { alignedWindowLua } from './aligned-window.js';
import { concurrencyDescription, concurrencyLua } from './concurrency.js';
import type { PolicyDescription } from './description.js';
import { fixedWindowDescription, fixedWindowLua } from './fixed-window.js';
import { lockoutLua } from './lockout.js';
import type { PolicyKind } from './policy.js';
import { slidingWindowDescription, slidingWindowLua } from './sliding-window.js';
import { slidingWindowCounterDescription, slidingWindowCounterLua } from './sliding-window-counter.js';
import { tokenBucketDescription, tokenBucketLua } from './token-bucket.js';

export { type AlignedWindowState, alignedWindow } from './aligned-window.js';
export { type ConcurrencyOptions, type ConcurrencyState, concurrency } from './concurrency.js';
export type { PolicyDescription, PolicyField } from './description.js';
export { evaluatePolicies, type Operation, type StateWrite, type StoreAction } from './evaluate.js';
export { type FixedWindowState, fixedWindow } from './fixed-window.js';
export { LOCKOUT_NAME, lockout } from './lockout.js';
export type {
  AnyPolicy,
  Policy,
  PolicyKind,
  PolicyLevel,
  PolicyResult,
  Transition,
  Write,
} from './policy.js';
export { type SlidingWindowState, slidingWindow } from './sliding-window.js';
export { type SlidingWindowCounterState, slidingWindowCounter } from './sliding-window-counter.js';
export { type TokenBucketOptions, tokenBucket } from './token-bucket.js';
export type { WindowOptions } from './window-options.js';

export const builtInTwins: Readonly<Record<PolicyKind, string>> = {
  'token-bucket': tokenBucketLua,
  'fixed-window': fixedWindowLua,
  'aligned-window': alignedWindowLua,
  'sliding-window': slidingWindowLua,
  'sliding-window-counter': slidingWindowCounterLua,
  concurrency: concurrencyLua,
  lockout: lockoutLua,
};

/**
 * The kinds the simulator offers, in this order: every policy a limiter takes (its lockout is the limiter's
 * `blockMs`, not a policy of its own). A kind of one's own joins them by its description alone.
 */
export const builtInPolicies: readonly PolicyDescription[] = [
  tokenBucketDescription,
  fixedWindowDescription,
  slidingWindowDescription,
  slidingWindowCounterDescription,
  concurrencyDescription,
];
