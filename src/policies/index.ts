// The policies and, for the Redis engine, their Lua twins keyed by kind.
import { fixedWindowLua } from './fixed-window.js';
import type { PolicyKind } from './policy.js';
import { slidingWindowLua } from './sliding-window.js';
import { slidingWindowCounterLua } from './sliding-window-counter.js';
import { tokenBucketLua } from './token-bucket.js';

export { evaluatePolicies } from './evaluate.js';
export { type FixedWindowState, fixedWindow } from './fixed-window.js';
export type { AnyPolicy, Policy, PolicyKind, PolicyResult, Transition } from './policy.js';
export { type SlidingWindowState, slidingWindow } from './sliding-window.js';
export { type SlidingWindowCounterState, slidingWindowCounter } from './sliding-window-counter.js';
export { type TokenBucketOptions, tokenBucket } from './token-bucket.js';
export type { WindowOptions } from './window-options.js';

export const policyLua: Readonly<Record<PolicyKind, string>> = {
  'token-bucket': tokenBucketLua,
  'fixed-window': fixedWindowLua,
  'sliding-window': slidingWindowLua,
  'sliding-window-counter': slidingWindowCounterLua,
};
