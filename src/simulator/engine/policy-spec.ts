// Policies as plain JSON: a spec names its kind and the factory's options, and is built by that factory.
import { configError } from '../../core/errors.js';
import { knownKeys, oneOf } from '../../core/validate.js';
import { type ConcurrencyOptions, concurrency } from '../../policies/concurrency.js';
import { fixedWindow } from '../../policies/fixed-window.js';
import type { AnyPolicy, PolicyKind } from '../../policies/policy.js';
import { slidingWindow } from '../../policies/sliding-window.js';
import { slidingWindowCounter } from '../../policies/sliding-window-counter.js';
import { type TokenBucketOptions, tokenBucket } from '../../policies/token-bucket.js';
import type { WindowOptions } from '../../policies/window-options.js';

/** A policy as plain JSON: the factory's options plus its `kind`. */
export type PolicySpec =
  | ({ readonly kind: 'token-bucket' } & TokenBucketOptions)
  | ({ readonly kind: 'fixed-window' | 'sliding-window' | 'sliding-window-counter' } & WindowOptions)
  | ({ readonly kind: 'concurrency' } & ConcurrencyOptions);

/** The kinds a spec may name: every policy a limiter takes (its lockout is the limiter's `blockMs`, not a policy). */
type SpecKind = Exclude<PolicyKind, 'lockout'>;

/** Each kind's keys: any other is refused. */
const KEYS: Readonly<Record<SpecKind, readonly string[]>> = {
  'token-bucket': ['kind', 'name', 'capacity', 'refillPerSecond', 'requestsPerMinute'],
  'fixed-window': ['kind', 'name', 'limit', 'windowMs'],
  'sliding-window': ['kind', 'name', 'limit', 'windowMs'],
  'sliding-window-counter': ['kind', 'name', 'limit', 'windowMs'],
  concurrency: ['kind', 'name', 'max', 'leaseMs', 'retryAfterMs'],
};

/** Builds a policy from its JSON description with the library's own factory, so its errors are the factory's. */
export function policyFromSpec(spec: PolicySpec): AnyPolicy {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    throw configError('policy', 'must be an object such as { "kind": "fixed-window", ... }', spec);
  }
  const kind = oneOf('kind', spec.kind, Object.keys(KEYS) as SpecKind[]);
  knownKeys(`a ${kind} policy`, spec, KEYS[kind]);
  const { kind: _, ...options } = spec;
  switch (spec.kind) {
    case 'token-bucket':
      return tokenBucket(options as TokenBucketOptions);
    case 'fixed-window':
      return fixedWindow(options as WindowOptions);
    case 'sliding-window':
      return slidingWindow(options as WindowOptions);
    case 'sliding-window-counter':
      return slidingWindowCounter(options as WindowOptions);
    case 'concurrency':
      return concurrency(options as ConcurrencyOptions);
  }
}
