// The forms' choices: the policy kinds (as the server serves them), lockout, traffic patterns and request durations.

/**
 * The policy kinds the server offers (GET /api/policies), by kind, in its order: each one's label, its fields
 * ([option, label, default]; durations accept ms or strings such as '10s'), its limit's name on the chart
 * (`limitLabel`), and whether its requests hold slots (`leased`). Empty until `loadPolicyKinds()` has filled it.
 */
export const POLICY_KINDS = {};

/** Fills POLICY_KINDS from the server; rejects when they cannot be loaded. */
export async function loadPolicyKinds() {
  const response = await fetch('/api/policies');
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  for (const { kind, ...entry } of await response.json()) POLICY_KINDS[kind] = entry;
}

/** The lockout a policy card can add (the limiter's `blockMs`): off until ticked, this long when on. */
export const LOCKOUT_DEFAULT = '10s';

/** How long each admitted request takes, for concurrency limits: sent as the scenario's `service`. */
export const SERVICE_KINDS = {
  fixed: {
    label: 'Fixed',
    fields: [['durationMs', 'Each takes (ms or 2s)', '2s']],
  },
  uniform: {
    label: 'Random in a range',
    fields: [
      ['minMs', 'From (ms or 1s)', '500'],
      ['maxMs', 'To (ms or 3s)', '3s'],
      ['seed', 'Seed', '1'],
    ],
  },
};

/** Traffic patterns: the hint shown under the picker, and fields as above, sent as the pattern's options. */
export const PATTERNS = {
  'boundary-burst': {
    label: 'Window-boundary burst',
    hint:
      'One request at 0 opens the window (Tollgate anchors windows at a client’s first request), then Limit ' +
      'requests just before the boundary at Window and Limit just after it. Blank spacing: a twentieth of the ' +
      'window shared among the Limit requests.',
    fields: [
      ['limit', 'Limit', '5'],
      ['windowMs', 'Window (ms or 10s)', '10s'],
      ['spacingMs', 'Spacing (ms, optional)', ''],
    ],
  },
  steady: {
    label: 'Steady rate',
    hint: 'Evenly spaced requests, the first at 0.',
    fields: [
      ['ratePerSecond', 'Requests per second', '1'],
      ['durationMs', 'Duration (ms or 30s)', '30s'],
    ],
  },
  bursts: {
    label: 'Periodic bursts',
    hint: 'Burst size requests every period, the first burst at 0, spacing ms apart within a burst.',
    fields: [
      ['size', 'Burst size', '8'],
      ['everyMs', 'Every (ms or 10s)', '10s'],
      ['durationMs', 'Duration (ms or 60s)', '40s'],
      ['spacingMs', 'Spacing (ms)', '50'],
    ],
  },
  random: {
    label: 'Random arrivals',
    hint: 'Poisson arrivals at a mean rate; the same seed always gives the same times.',
    fields: [
      ['meanRatePerSecond', 'Mean per second', '1'],
      ['durationMs', 'Duration (ms or 60s)', '40s'],
      ['seed', 'Seed', '1'],
    ],
  },
  ramp: {
    label: 'Ramp',
    hint: 'A rate rising (or falling) linearly over the duration.',
    fields: [
      ['fromRatePerSecond', 'From per second', '0.2'],
      ['toRatePerSecond', 'To per second', '2'],
      ['durationMs', 'Duration (ms or 60s)', '40s'],
    ],
  },
  custom: {
    label: 'Paste arrival times',
    hint: 'Milliseconds from the start, ascending, separated by commas, spaces or new lines.',
    fields: [],
  },
};
