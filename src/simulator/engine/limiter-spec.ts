// A simulated limiter as plain JSON: a policy spec, plus the limiter's lockout (`blockMs`) when it has one.
import { type Duration, parseDuration } from '../../core/duration.js';
import { configError } from '../../core/errors.js';
import { MAX_SPAN } from '../../core/validate.js';
import type { AnyPolicy } from '../../policies/policy.js';
import { type PolicySpec, policyFromSpec } from './policy-spec.js';

/**
 * One limiter of the simulation: its policy, and optionally `blockMs`, the lockout `createLimiter` takes (after a
 * denial, everything is denied for that long).
 */
export type LimiterSpec = PolicySpec & { readonly blockMs?: Duration | 0 };

export interface SimulatedLimiter {
  readonly policy: AnyPolicy;
  /** The lockout's length; undefined without one. */
  readonly blockMs: number | undefined;
  /** A concurrency limit's lease, in ms; undefined for the other kinds. */
  readonly leaseMs: number | undefined;
}

/** Builds the policy with its factory (its errors are the factory's) and checks `blockMs` as `createLimiter` does. */
export function limiterFromSpec(spec: LimiterSpec): SimulatedLimiter {
  if (typeof spec !== 'object' || spec === null || spec.blockMs === undefined)
    return { policy: policyFromSpec(spec), blockMs: undefined, leaseMs: leaseOf(spec) };
  const { blockMs, ...policySpec } = spec;
  return {
    policy: policyFromSpec(policySpec as PolicySpec),
    blockMs: lockoutMs(blockMs),
    leaseMs: leaseOf(spec),
  };
}

/** Read once the factory has accepted the spec, so it parses. */
function leaseOf(spec: PolicySpec): number | undefined {
  return spec.kind === 'concurrency' ? parseDuration('leaseMs', spec.leaseMs) : undefined;
}

/** 0 (which starts no block: a simulation makes no manual ones) or a duration below 2^51 ms, as a limiter takes it. */
function lockoutMs(value: unknown): number {
  const ms = value === 0 ? 0 : parseDuration('blockMs', value);
  if (ms >= MAX_SPAN) throw configError('blockMs', 'must be below 2^51 ms', value);
  return ms;
}
