// Sliding window log: exact, one timestamp per unit admitted in the last window, and its Lua twin.
import { configError } from '../core/errors.js';
import type { PolicyDescription } from './description.js';
import { type Policy, policyName, scaledQuota, type Transition, type Write } from './policy.js';
import { WINDOW_SPEC, type WindowOptions, windowParams } from './window-options.js';

/** Timestamps (ms) of admitted units, oldest first; a request of cost n adds n entries. */
export type SlidingWindowState = readonly number[];

/** Beyond this a log costs more than it is worth; the counter variant keeps O(1) state at any limit. */
const SLIDING_WINDOW_MAX_LIMIT = 10_000;

/**
 * Admits at most `limit` units in any window of `windowMs` ending now: exact, with no boundary burst.
 * State grows with the limit (one entry per admitted unit), so prefer `slidingWindowCounter` for large limits.
 *
 * @example
 * // At most 5 login attempts in any 10 minutes, however they fall.
 * const logins = createLimiter({ policy: slidingWindow({ limit: 5, windowMs: '10m' }), scope: 'login' });
 */
export function slidingWindow(options: WindowOptions): Policy<SlidingWindowState> {
  const { limit, windowMs } = windowParams(options);
  if (limit > SLIDING_WINDOW_MAX_LIMIT) {
    throw configError(
      'limit',
      `must be at most ${SLIDING_WINDOW_MAX_LIMIT} for a sliding window log (use slidingWindowCounter)`,
      limit,
    );
  }
  return {
    kind: 'sliding-window',
    name: policyName(options, 'sliding-window'),
    limit,
    windowMs,
    retentionMs: windowMs,
    reservable: false,
    args: [limit, windowMs],
    lua: slidingWindowLua,
    // A log of timestamps, kept as given.
    stateWidth: 0,
    leased: false,
    level: 'window-count',
    evaluate: (state, nowMs, cost) => transition(limit, windowMs, state ?? [], nowMs, cost),
    refund: (state, nowMs, cost, _lease, spentAtMs) => refund(windowMs, state ?? [], nowMs, cost, spentAtMs),
    scale: (share) => slidingWindow({ ...options, limit: scaledQuota(limit, share) }),
  };
}

function transition(
  limit: number,
  windowMs: number,
  log: SlidingWindowState,
  nowMs: number,
  cost: number,
): Transition<SlidingWindowState> {
  const newest = log.at(-1);
  // A clock that went backwards is held at the newest entry, so the log stays ordered and nothing expires early.
  const now = newest === undefined ? nowMs : Math.max(nowMs, newest);
  let drop = 0;
  while ((log[drop] ?? Number.POSITIVE_INFINITY) <= now - windowMs) drop++;
  const used = log.length - drop;
  // Waits are measured from the clock as given: after a step back they come out longer, never too short.
  const leaves = (t: number) => t + windowMs - nowMs;
  if (used + cost <= limit) {
    const last = cost > 0 ? now : used > 0 ? newest : undefined;
    const resetMs = last === undefined ? 0 : leaves(last);
    return {
      result: { allowed: true, remaining: limit - used - cost, resetMs, retryAfterMs: 0 },
      next: [...log.slice(drop), ...new Array<number>(cost).fill(now)],
      ttlMs: resetMs,
    };
  }
  // A cost within the limit fits once enough of the oldest live entries have left: the last of them is live, as
  // used + cost > limit. No wait makes room for a cost above the limit.
  return {
    result: {
      allowed: false,
      remaining: limit - used,
      resetMs: used > 0 ? leaves(newest as number) : 0,
      retryAfterMs: cost <= limit ? leaves(log[drop + used + cost - limit - 1] as number) : -1,
    },
    next: undefined,
    ttlMs: 0,
  };
}

/**
 * Drops one entry per refunded unit: the newest still in the window stamped no later than when the units were spent,
 * so their own (unless the clock went back, when older ones go). Never a later request's: it would leave the window
 * after them, so dropping it would free room the refunded units never held. Expired entries are gone already.
 */
function refund(
  windowMs: number,
  log: SlidingWindowState,
  nowMs: number,
  cost: number,
  spentAtMs: number,
): Write<SlidingWindowState> | undefined {
  // An empty log has nothing to give back: it ends with nothing to pop.
  const now = Math.max(nowMs, log.at(-1) ?? nowMs);
  let drop = 0;
  while ((log[drop] ?? Number.POSITIVE_INFINITY) <= now - windowMs) drop++;
  let end = log.length;
  while (end > drop && (log[end - 1] as number) > spentAtMs) end--;
  const pop = Math.min(cost, end - drop);
  if (pop === 0) return undefined;
  const next = [...log.slice(drop, end - pop), ...log.slice(end)];
  const last = next.at(-1);
  return { next, ttlMs: last === undefined ? 0 : last + windowMs - nowMs };
}

/** The Lua twin; state is a list of timestamps, trimmed and appended in place rather than rewritten. */
// Stryker disable next-line StringLiteral: Lua text; the differential suite checks it against a real Redis
export const slidingWindowLua = `
{
  load = function(key)
    local log = redis.pcall('LRANGE', key, 0, -1)
    if log.err then return foreign(key, log) end
    if #log == 0 then return nil end
    for i = 1, #log do log[i] = tonumber(log[i]) end
    return log
  end,
  save = function(key, st, ttl)
    if st.drop > 0 then redis.call('LTRIM', key, st.drop, -1) end
    if st.pop > 0 and st.keep == 0 then redis.call('RPOP', key, st.pop) end
    if st.pop > 0 and st.keep > 0 then
      -- A run before the newest entries: marked, then removed (entries are numbers, so only the marks match '').
      for i = st.keep + 1, st.keep + st.pop do redis.call('LSET', key, -i, '') end
      redis.call('LREM', key, st.pop, '')
    end
    local at, left = string.format('%.0f', st.at), st.push
    while left > 0 do
      local batch = {}
      for i = 1, math.min(left, 1000) do batch[i] = at end
      redis.call('RPUSH', key, unpack(batch))
      left = left - #batch
    end
    redis.call('PEXPIRE', key, ttl)
  end,
  decide = function(log, now_ms, cost, p)
    local limit, window = p[1], p[2]
    log = log or {}
    local n = #log
    local now = now_ms
    if n > 0 then now = math.max(now_ms, log[n]) end
    local drop = 0
    while drop < n and log[drop + 1] <= now - window do drop = drop + 1 end
    local used = n - drop
    if used + cost <= limit then
      local reset = 0
      if cost > 0 then reset = now + window - now_ms elseif used > 0 then reset = log[n] + window - now_ms end
      return 1, limit - used - cost, reset, 0, { drop = drop, pop = 0, keep = 0, push = cost, at = now }, reset
    end
    local reset, retry = 0, -1
    if used > 0 then reset = log[n] + window - now_ms end
    if cost <= limit then retry = log[drop + used + cost - limit] + window - now_ms end
    return 0, limit - used, reset, retry, nil, 0
  end,
  refund = function(log, now_ms, cost, p, lease, spent_at)
    if not log then return nil end
    local window = p[2]
    local n = #log
    local now = math.max(now_ms, log[n])
    local drop = 0
    while drop < n and log[drop + 1] <= now - window do drop = drop + 1 end
    local stop = n
    while stop > drop and log[stop] > spent_at do stop = stop - 1 end
    local pop = math.min(cost, stop - drop)
    if pop == 0 then return nil end
    local rest = 0
    if stop < n then rest = log[n] + window - now_ms elseif n - drop - pop > 0 then rest = log[n - pop] + window - now_ms end
    return { drop = drop, pop = pop, keep = n - stop, push = 0, at = now }, rest
  end,
}
`;

/** The sliding window log as the simulator offers it. */
export const slidingWindowDescription: PolicyDescription = {
  kind: 'sliding-window',
  label: 'Sliding window (log)',
  ...WINDOW_SPEC,
  build: (options) => slidingWindow(options as unknown as WindowOptions),
};
