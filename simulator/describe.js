// Policies and durations in words, for the summary table, the chart titles and the status line.
import { POLICY_KINDS } from './choices.js';

export function formatDuration(ms) {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms >= 1000) return `${Number((ms / 1000).toFixed(3))} s`;
  return `${ms} ms`;
}

/** The policy as the server built it (durations in ms, a bucket's refill as its time from empty to full). */
export function describePolicy(policy) {
  const label = POLICY_KINDS[policy.kind].label;
  if (policy.kind === 'token-bucket') {
    return policy.windowMs > 0
      ? `${label}: capacity ${policy.limit}, empty to full in ${formatDuration(policy.windowMs)}`
      : `${label}: capacity ${policy.limit}, never refills`;
  }
  return `${label}: ${policy.limit} per ${formatDuration(policy.windowMs)}`;
}
