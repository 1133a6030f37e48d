// A Tollgate policy that counts every hit as @fastify/rate-limit's local store does, its two ways past `max` too.
import { MAX_SPAN } from '../../../core/validate.js';
import { START_COUNT_STATE } from '../../../policies/fixed-window.js';
import type { Policy, Transition } from '../../../policies/policy.js';

/** `[start, count]`: the window's start (restarted past `max` by the two modes below) and its hits. */
type HitState = readonly [start: number, count: number];

/** What a hit past `max` does: nothing, restart the window (`continueExceeding`), or back off exponentially. */
export type PastMax = 'count' | 'continue' | 'backoff';
const MODES: readonly PastMax[] = ['count', 'continue', 'backoff'];

/** The count's ceiling as Tollgate sees it: never reached, so the counter admits every hit and counts it. */
export const COUNTABLE = MAX_SPAN - 1;
/** The longest wait a backoff reports, as the plugin caps it. */
const LONGEST = Number.MAX_SAFE_INTEGER;

/**
 * The plugin's counter over `windowMs` for a limit of `max`, as a policy any Tollgate store runs (its Lua twin in
 * Redis): a window opens at the first hit after the last one ended; each hit adds one, admitted whatever the
 * count, so the caller compares it with `max`. `remaining` is COUNTABLE less the count, `resetMs` the wait the
 * plugin reports; a cost of 0 reads without writing. Past `max`, 'continue' restarts the window at each hit, and
 * 'backoff' too, reporting a wait that doubles with each hit (the window still ends one `windowMs` after it).
 */
export function hitCounter(windowMs: number, max: number, pastMax: PastMax): Policy<HitState> {
  const mode = MODES.indexOf(pastMax);
  return {
    kind: 'fastify-rate-limit',
    name: 'hits',
    limit: COUNTABLE,
    windowMs,
    retentionMs: Math.max(1, windowMs),
    reservable: false,
    args: [windowMs, max, mode],
    lua: hitCounterLua,
    stateWidth: 2,
    leased: false,
    level: 'window-count',
    evaluate: (state, nowMs, cost) => transition(windowMs, max, pastMax, state, nowMs, cost),
    // Nothing spent is ever given back: the plugin has no refunds.
    refund: () => undefined,
    scale: () => hitCounter(windowMs, max, pastMax),
  };
}

function transition(
  windowMs: number,
  max: number,
  pastMax: PastMax,
  state: HitState | undefined,
  nowMs: number,
  cost: number,
): Transition<HitState> {
  const live = state !== undefined && state[0] + windowMs > nowMs;
  if (cost === 0) {
    const result = live ? figures(state[1], state[0] + windowMs - nowMs) : figures(0, 0);
    return { result, next: undefined, ttlMs: 0 };
  }
  let [start, count] = live ? state : [nowMs, 0];
  count += cost;
  let waitMs = start + windowMs - nowMs;
  if (count > max && pastMax !== 'count') {
    start = nowMs;
    waitMs = pastMax === 'continue' ? windowMs : Math.min(windowMs * 2 ** (count - max - 1), LONGEST);
  }
  // Kept one ms at least: a window of 0 ends at once, and Redis takes no expiry of 0.
  return {
    result: figures(count, waitMs),
    next: [start, count],
    ttlMs: Math.max(1, start + windowMs - nowMs),
  };
}

function figures(count: number, waitMs: number) {
  return { allowed: true, remaining: COUNTABLE - count, resetMs: waitMs, retryAfterMs: 0 };
}

/** The Lua twin; the state is the string "start:count", the parameters windowMs, max and the mode's index. */
// Stryker disable next-line StringLiteral: Lua text; the differential tests check it against a real Redis
const hitCounterLua = `
{
  at_rest = function(st, p) return st[1] + p[1] end,
${START_COUNT_STATE}
  decide = function(st, now_ms, cost, p)
    local window, max, mode = p[1], p[2], p[3]
    local countable = ${COUNTABLE}
    local live = st and st[1] + window > now_ms
    if cost == 0 then
      if live then return 1, countable - st[2], st[1] + window - now_ms, 0, nil, 0 end
      return 1, countable, 0, 0, nil, 0
    end
    local start, count = now_ms, 0
    if live then start, count = st[1], st[2] end
    count = count + cost
    local wait = start + window - now_ms
    if count > max and mode > 0 then
      start = now_ms
      wait = window
      if mode == 2 then wait = math.min(window * 2 ^ (count - max - 1), ${LONGEST}) end
    end
    return 1, countable - count, wait, 0, { start, count }, math.max(1, start + window - now_ms)
  end,
  refund = function() return nil end,
}
`;
