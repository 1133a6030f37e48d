// Options shared by the window policies, validated in one place.
import type { Duration } from '../core/duration.js';
import { parseDuration } from '../core/duration.js';
import { configError } from '../core/errors.js';
import { MAX_SPAN, nonNegativeInteger } from '../core/validate.js';
import type { PolicyDescription } from './description.js';
import type { PolicyNameOption } from './policy.js';

export interface WindowOptions extends PolicyNameOption {
  /** Requests (cost units) admitted per window. 0 rejects everything. */
  readonly limit: number;
  /** The window's length: ms or a string such as '10s'. */
  readonly windowMs: Duration;
}

export function windowParams(options: WindowOptions): { limit: number; windowMs: number } {
  const limit = nonNegativeInteger('limit', options.limit);
  const windowMs = parseDuration('windowMs', options.windowMs);
  // The counter policy compares limit * window products; keep them exact in both engines.
  if (limit * windowMs >= MAX_SPAN) throw configError('limit', 'times `windowMs` must stay below 2^51');
  return { limit, windowMs };
}

/**
 * The limit and the window each below 2^51, for a window that never multiplies them: an aligned window counts
 * against the limit and measures time against the window, so a million a month (a product past 2^51) stays exact.
 */
export function windowLimits(options: WindowOptions): { limit: number; windowMs: number } {
  const limit = nonNegativeInteger('limit', options.limit);
  const windowMs = parseDuration('windowMs', options.windowMs);
  if (limit >= MAX_SPAN) throw configError('limit', 'must stay below 2^51', limit);
  if (windowMs >= MAX_SPAN) throw configError('windowMs', 'must stay below 2^51 ms', windowMs);
  return { limit, windowMs };
}

/** A window spec's options and the page's form for them: the same for every window kind. */
export const WINDOW_SPEC = {
  options: ['name', 'limit', 'windowMs'],
  fields: [
    ['limit', 'Limit', '5'],
    ['windowMs', 'Window (ms or 10s)', '10s'],
  ],
} as const satisfies Pick<PolicyDescription, 'options' | 'fields'>;
