// Fixed window: a counter per window, anchored at the first request so clients do not all reset at once.

import type { PolicyDescription } from './description.js';
import { type Policy, policyName, scaledQuota, type Transition, type Write } from './policy.js';
import { WINDOW_SPEC, type WindowOptions, windowParams } from './window-options.js';

/** `[windowStart, count]`: both are needed, so the state never relies on a key's expiry to mean anything. */
export type FixedWindowState = readonly [start: number, count: number];

/**
 * Admits `limit` units per window. A window opens at the first request after the previous one closed, so
 * windows are per client rather than aligned to the clock (no synchronised stampede at the top of the minute).
 * Its known weakness: up to 2 x limit - 1 can pass within one window's length around a window boundary.
 *
 * @example
 * // 100 requests per client per 15 minutes.
 * const limiter = createLimiter({ policy: fixedWindow({ limit: 100, windowMs: '15m' }) });
 */
export function fixedWindow(options: WindowOptions): Policy<FixedWindowState> {
  const { limit, windowMs } = windowParams(options);
  return {
    kind: 'fixed-window',
    name: policyName(options, 'fixed-window'),
    limit,
    windowMs,
    retentionMs: windowMs,
    reservable: false,
    args: [limit, windowMs],
    lua: fixedWindowLua,
    // [start, count]
    stateWidth: 2,
    leased: false,
    level: 'window-count',
    evaluate: (state, nowMs, cost) => transition(limit, windowMs, state, nowMs, cost),
    refund: (state, nowMs, cost, _lease, spentAtMs) => refund(windowMs, state, nowMs, cost, spentAtMs),
    scale: (share) => fixedWindow({ ...options, limit: scaledQuota(limit, share) }),
  };
}

/**
 * Counts a request into the window `state` holds, or into one opened now when it has ended: the aligned window
 * shares these steps, handing them the window it opened itself.
 */
export function transition(
  limit: number,
  windowMs: number,
  state: FixedWindowState | undefined,
  nowMs: number,
  cost: number,
): Transition<FixedWindowState> {
  let [start, count] = state ?? [nowMs, 0];
  // A clock that went backwards stays in the stored window (no fresh window is minted), and the waits are
  // measured from the clock as given, so they come out longer rather than too short.
  const now = Math.max(nowMs, start);
  if (now >= start + windowMs) {
    start = now;
    count = 0;
  }
  const windowEnd = start + windowMs - nowMs;
  if (count + cost <= limit) {
    return {
      result: {
        allowed: true,
        remaining: limit - count - cost,
        resetMs: count + cost > 0 ? windowEnd : 0,
        retryAfterMs: 0,
      },
      next: [start, count + cost],
      ttlMs: windowEnd,
    };
  }
  return {
    result: {
      allowed: false,
      remaining: limit - count,
      resetMs: count > 0 ? windowEnd : 0,
      retryAfterMs: cost <= limit ? windowEnd : -1,
    },
    next: undefined,
    ttlMs: 0,
  };
}

/**
 * Takes units back off the count of the window they were spent in, never below zero, while it is the stored window
 * and lasts: a window opened since (by a later request) never held them, and one that has ended is at rest anyway.
 * Units spent at a clock behind the stored window's start could be either, so they stay counted.
 */
export function refund(
  windowMs: number,
  state: FixedWindowState | undefined,
  nowMs: number,
  cost: number,
  spentAtMs: number,
): Write<FixedWindowState> | undefined {
  if (state === undefined) return undefined;
  const [start, count] = state;
  const end = start + windowMs;
  if (spentAtMs < start || spentAtMs >= end || Math.max(nowMs, start) >= end || count === 0 || cost === 0)
    return undefined;
  return { next: [start, Math.max(0, count - cost)], ttlMs: end - nowMs };
}

/**
 * A Lua twin's `load` and `save` of a state that is a window's start and its count, stored as "start:count": the
 * fixed window's, and any counter of hits in a window opened by the first of them.
 */
// Stryker disable next-line StringLiteral: Lua text; the differential suite checks it against a real Redis
export const START_COUNT_STATE = `
  load = function(key)
    local f = read_fields(key, '^(%d+):(%d+)$')
    if f then return { tonumber(f[1]), tonumber(f[2]) } end
  end,
  save = function(key, st, ttl)
    set_state(key, string.format('%d:%d', st[1], st[2]), ttl)
  end,`;

/**
 * The body of a Lua twin's `decide` over a "start:count" state: the fixed window's steps, which the aligned window
 * takes after opening its own window (`st`, `now_ms`, `cost` and `p` in scope, as `decide` has them).
 */
// Stryker disable next-line StringLiteral: Lua text; the differential suite checks it against a real Redis
export const START_COUNT_DECIDE = `    local limit, window = p[1], p[2]
    local start, count = now_ms, 0
    if st then start, count = st[1], st[2] end
    local now = math.max(now_ms, start)
    if now >= start + window then start, count = now, 0 end
    local window_end = start + window - now_ms
    if count + cost <= limit then
      local reset = 0
      if count + cost > 0 then reset = window_end end
      return 1, limit - count - cost, reset, 0, { start, count + cost }, window_end
    end
    local reset, retry = 0, -1
    if count > 0 then reset = window_end end
    if cost <= limit then retry = window_end end
    return 0, limit - count, reset, retry, nil, 0`;

/** A Lua twin's `refund` over a "start:count" state, as `refund` above: the fixed and the aligned window's. */
// Stryker disable next-line StringLiteral: Lua text; the differential suite checks it against a real Redis
export const START_COUNT_REFUND = `  refund = function(st, now_ms, cost, p, lease, spent_at)
    if not st then return nil end
    local window = p[2]
    local start, count = st[1], st[2]
    local stop = start + window
    if spent_at < start or spent_at >= stop or math.max(now_ms, start) >= stop or count == 0 or cost == 0 then
      return nil
    end
    return { start, math.max(0, count - cost) }, stop - now_ms
  end,`;

/** The Lua twin; state is the string "start:count". */
// Stryker disable next-line StringLiteral: Lua text; the differential suite checks it against a real Redis
export const fixedWindowLua = `
{
  at_rest = function(st, p) return st[1] + p[2] end,
${START_COUNT_STATE}
  decide = function(st, now_ms, cost, p)
${START_COUNT_DECIDE}
  end,
${START_COUNT_REFUND}
}
`;

/** The fixed window as the simulator offers it. */
export const fixedWindowDescription: PolicyDescription = {
  kind: 'fixed-window',
  label: 'Fixed window',
  ...WINDOW_SPEC,
  build: (options) => fixedWindow(options as unknown as WindowOptions),
};
