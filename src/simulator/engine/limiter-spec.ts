// A simulated limiter as plain JSON: a policy spec, plus the limiter's lockout (`blockMs`) when it has one.
import { type Duration, parseDuration } from '../../core/duration.js';
import { configError } from '../../core/errors.js';
import { MAX_SPAN } from '../../core/validate.js';
import type { AnyPolicy } from '../../policies/policy.js';
import type { PolicyCatalog } from './policy-catalog.js';
import { buildPolicy, type PolicySpec } from './policy-spec.js';

/**
 * One limiter of the simulation: its policy, and optionally `blockMs`, the lockout `createLimiter` takes (after a
 * denial, everything is denied for that long).
 */
export type LimiterSpec = PolicySpec & { readonly blockMs?: Duration | 0 };

export interface SimulatedLimiter {
  readonly policy: AnyPolicy;
  /** The lockout's length; undefined without one. */
  readonly blockMs: number | undefined;
  /** A leased policy's lease (a concurrency limit's `leaseMs`), in ms; undefined for the other kinds. */
  readonly leaseMs: number | undefined;
}

/**
 * Builds the policy with its kind's factory (its errors are the factory's) and checks `blockMs` as `createLimiter`
 * does.
 */
export function limiterFromSpec(spec: LimiterSpec, catalog: PolicyCatalog): SimulatedLimiter {
  if (typeof spec !== 'object' || spec === null || spec.blockMs === undefined) {
    const policy = buildPolicy(spec, catalog);
    return { policy, blockMs: undefined, leaseMs: leaseOf(policy, spec) };
  }
  const { blockMs, ...policySpec } = spec;
  const policy = buildPolicy(policySpec as PolicySpec, catalog);
  return { policy, blockMs: lockoutMs(blockMs), leaseMs: leaseOf(policy, spec) };
}

/** Read once the factory has accepted the spec, so it parses; a leased kind's spec that gives none has none. */
function leaseOf(policy: AnyPolicy, spec: PolicySpec): number | undefined {
  const { leaseMs } = spec as { readonly leaseMs?: unknown };
  return policy.leased && leaseMs !== undefined ? parseDuration('leaseMs', leaseMs) : undefined;
}

/** 0 (which starts no block: a simulation makes no manual ones) or a duration below 2^51 ms, as a limiter takes it. */
function lockoutMs(value: unknown): number {
  const ms = value === 0 ? 0 : parseDuration('blockMs', value);
  if (ms >= MAX_SPAN) throw configError('blockMs', 'must be below 2^51 ms', value);
  return ms;
}
