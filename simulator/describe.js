// Policies and durations in words, for the summary table, the chart titles and the status line.
import { POLICY_KINDS } from './choices.js';

export function formatDuration(ms) {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms >= 1000) return `${Number((ms / 1000).toFixed(3))} s`;
  return `${ms} ms`;
}

/**
 * A simulated limiter as the server built it (durations in ms, a bucket's refill as its time from empty to full):
 * its policy, then its lockout when it has one.
 */
export function describePolicy({ policy, level, blockMs }) {
  const lockout =
    blockMs === undefined
      ? ''
      : blockMs > 0
        ? `, locked out ${formatDuration(blockMs)} after a denial`
        : ', no lockout (0 ms)';
  return `${POLICY_KINDS[policy.kind]?.label ?? policy.kind}: ${describeLimit(policy, level)}${lockout}`;
}

/** The limit in words, by what the policy's level counts: tokens, requests in flight, or units in a window. */
function describeLimit(policy, level) {
  switch (level) {
    case 'tokens':
      return policy.windowMs > 0
        ? `capacity ${policy.limit}, empty to full in ${formatDuration(policy.windowMs)}`
        : `capacity ${policy.limit}, never refills`;
    case 'in-flight':
      return policy.leaseMs === undefined
        ? `${policy.limit} in flight`
        : `${policy.limit} in flight, leases of ${formatDuration(policy.leaseMs)}`;
    default:
      return `${policy.limit} per ${formatDuration(policy.windowMs)}`;
  }
}
