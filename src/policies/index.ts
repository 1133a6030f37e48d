// The policies and, for the Redis engine, their Lua twins keyed by kind.
import { concurrencyLua } from './concurrency.js';
import { fixedWindowLua } from './fixed-window.js';
import { lockoutLua } from './lockout.js';
import type { PolicyKind } from './policy.js';
import { slidingWindowLua } from './sliding-window.js';
import { slidingWindowCounterLua } from './sliding-window-counter.js';
import { tokenBucketLua } from './token-bucket.js';

export { type ConcurrencyOptions, type ConcurrencyState, concurrency } from './concurrency.js';
export { evaluatePolicies, type Operation, type StateWrite, type StoreAction } from './evaluate.js';
export { type FixedWindowState, fixedWindow } from './fixed-window.js';
export { LOCKOUT_NAME, lockout } from './lockout.js';
export type { AnyPolicy, Policy, PolicyKind, PolicyResult, Transition, Write } from './policy.js';
export { type SlidingWindowState, slidingWindow } from './sliding-window.js';
export { type SlidingWindowCounterState, slidingWindowCounter } from './sliding-window-counter.js';
export { type TokenBucketOptions, tokenBucket } from './token-bucket.js';
export type { WindowOptions } from './window-options.js';

export const policyLua: Readonly<Record<PolicyKind, string>> = {
  'token-bucket': tokenBucketLua,
  'fixed-window': fixedWindowLua,
  'sliding-window': slidingWindowLua,
  'sliding-window-counter': slidingWindowCounterLua,
  concurrency: concurrencyLua,
  lockout: lockoutLua,
};
