// Aligned window: a fixed window whose windows start at multiples of its length since the Unix epoch, for everyone.

import { floorDiv } from '../core/integer.js';
import type { PolicyDescription } from './description.js';
import {
  type FixedWindowState,
  refund,
  START_COUNT_DECIDE,
  START_COUNT_REFUND,
  START_COUNT_STATE,
  transition,
} from './fixed-window.js';
import { type Policy, policyName, scaledQuota } from './policy.js';
import { WINDOW_SPEC, type WindowOptions, windowLimits } from './window-options.js';

/** `[windowStart, count]`, the start a multiple of the window's length. */
export type AlignedWindowState = FixedWindowState;

/**
 * Admits `limit` units per window, the windows aligned to the clock: a minute's window is 12:00:00.000 to
 * 12:00:59.999 for every client, as Envoy's rate limit service counts. Unlike it, a denied request spends nothing.
 * Every client resets at once at the top of the window, and up to 2 x limit can pass within one window's
 * length around a boundary; `fixedWindow` opens windows per client instead.
 *
 * @example
 * // 60 requests per client per calendar minute.
 * const limiter = createLimiter({ policy: alignedWindow({ limit: 60, windowMs: '1m' }) });
 */
export function alignedWindow(options: WindowOptions): Policy<AlignedWindowState> {
  const { limit, windowMs } = windowLimits(options);
  return {
    kind: 'aligned-window',
    name: policyName(options, 'aligned-window'),
    limit,
    windowMs,
    retentionMs: windowMs,
    reservable: false,
    args: [limit, windowMs],
    lua: alignedWindowLua,
    // [start, count]
    stateWidth: 2,
    leased: false,
    level: 'window-count',
    evaluate: (state, nowMs, cost) =>
      transition(limit, windowMs, aligned(windowMs, state, nowMs), nowMs, cost),
    // A refund needs no alignment: the stored window is the aligned one its units were spent in, or none is.
    refund: (state, nowMs, cost, _lease, spentAtMs) => refund(windowMs, state, nowMs, cost, spentAtMs),
    scale: (share) => alignedWindow({ ...options, limit: scaledQuota(limit, share) }),
  };
}

/**
 * The stored window until the clock reaches a later one, then an empty one opened at the last multiple of
 * `windowMs`: from there on the fixed window's steps count alike. A clock that went backwards is in no later window,
 * so it stays in the stored one, and the fixed window's steps measure its waits from the clock as given.
 */
function aligned(windowMs: number, state: AlignedWindowState | undefined, nowMs: number): AlignedWindowState {
  const start = floorDiv(nowMs, windowMs) * windowMs;
  return state !== undefined && start <= state[0] ? state : [start, 0];
}

/** The Lua twin; state is the string "start:count", as the fixed window's. */
// Stryker disable next-line StringLiteral: Lua text; the differential suite checks it against a real Redis
export const alignedWindowLua = `
{
  at_rest = function(st, p) return st[1] + p[2] end,
${START_COUNT_STATE}
  decide = function(st, now_ms, cost, p)
    local open = floor_div(now_ms, p[2]) * p[2]
    if not st or open > st[1] then st = { open, 0 } end
${START_COUNT_DECIDE}
  end,
${START_COUNT_REFUND}
}
`;

/** The aligned window as the simulator offers it. */
export const alignedWindowDescription: PolicyDescription = {
  kind: 'aligned-window',
  label: 'Aligned window',
  ...WINDOW_SPEC,
  build: (options) => alignedWindow(options as unknown as WindowOptions),
};
