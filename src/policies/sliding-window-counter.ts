// Sliding window counter: two counters weighted by overlap (Cloudflare's approximation), O(1) state, and its Lua twin.
import { floorDiv } from '../core/integer.js';
import type { PolicyDescription } from './description.js';
import { type Policy, policyName, scaledQuota, type Transition, type Write } from './policy.js';
import { WINDOW_SPEC, type WindowOptions, windowParams } from './window-options.js';

/** `[currentStart, previousCount, currentCount]`. */
export type SlidingWindowCounterState = readonly [start: number, previous: number, current: number];

/**
 * Estimates the units in the sliding window as `previous * (W - elapsed) / W + current` and admits while the
 * estimate stays within `limit`, compared in integers as `previous * (W - elapsed) + current * W <= limit * W`.
 * Each fixed window admits at most `limit`; any sliding window of length W admits at most `2 * limit - 1`
 * (when the previous window's traffic all came at its very end), and never wrongly denies uniform traffic.
 * Windows are anchored at the client's first request and stay on that grid while the client is active.
 *
 * @example
 * // 1,000 requests per hour in constant memory per client, without a fixed window's boundary burst.
 * const limiter = createLimiter({ policy: slidingWindowCounter({ limit: 1000, windowMs: '1h' }) });
 */
export function slidingWindowCounter(options: WindowOptions): Policy<SlidingWindowCounterState> {
  const { limit, windowMs } = windowParams(options);
  return {
    kind: 'sliding-window-counter',
    name: policyName(options, 'sliding-window-counter'),
    limit,
    windowMs,
    // The window before the current one still weighs until the current one ends.
    retentionMs: 2 * windowMs,
    reservable: false,
    args: [limit, windowMs],
    lua: slidingWindowCounterLua,
    // [start, previous, current]
    stateWidth: 3,
    leased: false,
    level: 'window-count',
    evaluate: (state, nowMs, cost) => transition(limit, windowMs, state, nowMs, cost),
    refund: (state, nowMs, cost, _lease, spentAtMs) => refund(windowMs, state, nowMs, cost, spentAtMs),
    scale: (share) => slidingWindowCounter({ ...options, limit: scaledQuota(limit, share) }),
  };
}

function transition(
  limit: number,
  window: number,
  state: SlidingWindowCounterState | undefined,
  nowMs: number,
  cost: number,
): Transition<SlidingWindowCounterState> {
  let [start, previous, current] = state ?? [nowMs, 0, 0];
  // A clock that went backwards stays in the stored window.
  const now = Math.max(nowMs, start);
  if (now >= start + 2 * window) {
    [start, previous, current] = [now, 0, 0];
  } else if (now >= start + window) {
    [start, previous, current] = [start + window, current, 0];
  }
  const elapsed = now - start;
  const weight = window - elapsed;
  // Waits are measured from the clock as given: after a step back they come out longer, never too short.
  const lag = now - nowMs;
  const restsIn = (counted: number) =>
    counted > 0 ? start + 2 * window - nowMs : previous > 0 ? start + window - nowMs : 0;
  if (previous * weight + (current + cost) * window <= limit * window) {
    return {
      result: {
        allowed: true,
        remaining: Math.max(0, floorDiv(limit * window - previous * weight, window) - current - cost),
        resetMs: restsIn(current + cost),
        retryAfterMs: 0,
      },
      next: [start, previous, current + cost],
      ttlMs: restsIn(current + cost),
    };
  }
  let retryAfterMs = -1;
  if (cost <= limit) {
    const room = limit - current - cost;
    retryAfterMs =
      room >= 0
        ? // Later in this window, once the previous window's weight has shrunk enough.
          window - floorDiv(room * window, previous) - elapsed
        : // In the next window, where this window's count becomes the weighted one.
          window - elapsed + Math.max(0, window - floorDiv((limit - cost) * window, current));
    retryAfterMs += lag;
  }
  return {
    result: {
      allowed: false,
      remaining: Math.max(0, floorDiv(limit * window - previous * weight, window) - current),
      resetMs: restsIn(current),
      retryAfterMs,
    },
    next: undefined,
    ttlMs: 0,
  };
}

/**
 * Takes units back off the count of the window they were spent in, never below zero: the current window's, or the
 * previous one's, which still weighs (as a request now reads the state: an ended window has become the previous
 * one). Units from before those weigh nothing any more, and are not handed back to a window that never held them.
 */
function refund(
  window: number,
  state: SlidingWindowCounterState | undefined,
  nowMs: number,
  cost: number,
  spentAtMs: number,
): Write<SlidingWindowCounterState> | undefined {
  if (state === undefined) return undefined;
  let [start, previous, current] = state;
  const now = Math.max(nowMs, start);
  if (now >= start + 2 * window) return undefined;
  if (now >= start + window) [start, previous, current] = [start + window, current, 0];
  const inCurrent = spentAtMs >= start;
  const held = inCurrent ? current : previous;
  if (spentAtMs < start - window || spentAtMs >= start + window || held === 0 || cost === 0) return undefined;
  const left = Math.max(0, held - cost);
  if (inCurrent) current = left;
  else previous = left;
  const restsIn = current > 0 ? start + 2 * window - nowMs : previous > 0 ? start + window - nowMs : 0;
  return { next: [start, previous, current], ttlMs: restsIn };
}

/** The Lua twin; state is the string "start:previous:current". */
// Stryker disable next-line StringLiteral: Lua text; the differential suite checks it against a real Redis
export const slidingWindowCounterLua = `
{
  at_rest = function(st, p) return st[1] + 2 * p[2] end,
  load = function(key)
    local f = read_fields(key, '^(%d+):(%d+):(%d+)$')
    if f then return { tonumber(f[1]), tonumber(f[2]), tonumber(f[3]) } end
  end,
  save = function(key, st, ttl)
    set_state(key, string.format('%d:%d:%d', st[1], st[2], st[3]), ttl)
  end,
  decide = function(st, now_ms, cost, p)
    local limit, window = p[1], p[2]
    local start, previous, current = now_ms, 0, 0
    if st then start, previous, current = st[1], st[2], st[3] end
    local now = math.max(now_ms, start)
    if now >= start + 2 * window then
      start, previous, current = now, 0, 0
    elseif now >= start + window then
      start, previous, current = start + window, current, 0
    end
    local elapsed = now - start
    local weight = window - elapsed
    local function rests_in(counted)
      if counted > 0 then return start + 2 * window - now_ms end
      if previous > 0 then return start + window - now_ms end
      return 0
    end
    if previous * weight + (current + cost) * window <= limit * window then
      local rest = rests_in(current + cost)
      local remaining = math.max(0, floor_div(limit * window - previous * weight, window) - current - cost)
      return 1, remaining, rest, 0, { start, previous, current + cost }, rest
    end
    local reset = rests_in(current)
    local retry = -1
    if cost <= limit then
      local room = limit - current - cost
      if room >= 0 then
        retry = window - floor_div(room * window, previous) - elapsed
      else
        retry = window - elapsed + math.max(0, window - floor_div((limit - cost) * window, current))
      end
      retry = retry + (now - now_ms)
    end
    return 0, math.max(0, floor_div(limit * window - previous * weight, window) - current), reset, retry, nil, 0
  end,
  refund = function(st, now_ms, cost, p, lease, spent_at)
    if not st then return nil end
    local window = p[2]
    local start, previous, current = st[1], st[2], st[3]
    local now = math.max(now_ms, start)
    if now >= start + 2 * window then return nil end
    if now >= start + window then start, previous, current = start + window, current, 0 end
    local in_current = spent_at >= start
    local held = previous
    if in_current then held = current end
    if spent_at < start - window or spent_at >= start + window or held == 0 or cost == 0 then return nil end
    local left = math.max(0, held - cost)
    if in_current then current = left else previous = left end
    local rest = 0
    if current > 0 then rest = start + 2 * window - now_ms elseif previous > 0 then rest = start + window - now_ms end
    return { start, previous, current }, rest
  end,
}
`;

/** The sliding window counter as the simulator offers it. */
export const slidingWindowCounterDescription: PolicyDescription = {
  kind: 'sliding-window-counter',
  label: 'Sliding window counter',
  ...WINDOW_SPEC,
  build: (options) => slidingWindowCounter(options as unknown as WindowOptions),
};
