// A limiter's lockout, kept as one more policy: denies everything until a time, set after a denial or by block().
import type { Policy, PolicyResult, Transition, Write } from './policy.js';

/** Its member name in bucket keys: `!` is outside the characters a policy name may use, so it never collides. */
export const LOCKOUT_NAME = '!lockout';

/** The lockout's view while it lets requests through; the limiter never shows a lockout's own figures. */
const OPEN: PolicyResult = Object.freeze({ allowed: true, remaining: 1, resetMs: 0, retryAfterMs: 0 });

/**
 * The state is the epoch ms until which every request is denied. `blockMs` is how long a denial locks the
 * identifier out (0: only `block()` does). It is evaluated beside the limiter's policies, so a block denies in the
 * same atomic step that would otherwise spend, and spends nothing; a denial by the other policies starts it (see
 * `evaluatePolicies`). Being a state like the others, it is shared through the store across the fleet.
 */
export function lockout(blockMs: number): Policy<number> {
  return {
    kind: 'lockout',
    name: LOCKOUT_NAME,
    limit: 0,
    windowMs: 0,
    retentionMs: blockMs,
    reservable: true,
    args: [blockMs],
    lua: lockoutLua,
    stateWidth: 1,
    leased: false,
    level: 'window-count',
    evaluate: (until, nowMs) => transition(until, nowMs),
    refund: () => undefined,
    heldMs: (until, nowMs) => Math.max(0, until - nowMs),
    block: (until, nowMs, ms) => block(until, nowMs, ms),
    onDenial: (until, nowMs) => transition(blockMs > 0 ? nowMs + blockMs : until, nowMs, blockMs > 0),
    scale: () => lockout(blockMs),
  };
}

function transition(until: number | undefined, nowMs: number, write = false): Transition<number> {
  if (until === undefined || until <= nowMs) return { result: OPEN, next: undefined, ttlMs: 0 };
  const waitMs = until - nowMs;
  return {
    result: { allowed: false, remaining: 0, resetMs: waitMs, retryAfterMs: waitMs },
    next: write ? until : undefined,
    ttlMs: waitMs,
  };
}

/**
 * What a locked-out client is told of one of its policies: nothing left, and no retry (nor rest) before the block
 * ends, unless the policy says no wait ever helps.
 */
export function lockedOut({ resetMs, retryAfterMs }: PolicyResult, blockMs: number): PolicyResult {
  return {
    allowed: false,
    remaining: 0,
    resetMs: resetMs < 0 ? resetMs : Math.max(resetMs, blockMs),
    retryAfterMs: retryAfterMs < 0 ? retryAfterMs : Math.max(retryAfterMs, blockMs),
  };
}

/** Extends a block, never shortens one: a lockout lifted early is `unblock()`'s job alone. */
function block(until: number | undefined, nowMs: number, ms: number): Write<number> | undefined {
  const next = nowMs + ms;
  if ((until ?? Number.NEGATIVE_INFINITY) >= next) return undefined;
  return { next, ttlMs: ms };
}

/** The Lua twin; state is the integer string of the time the block ends. */
// Stryker disable next-line StringLiteral: Lua text; the differential suite checks it against a real Redis
export const lockoutLua = `
{
  reservable = true,
  load = read_integer,
  save = set_state,
  decide = function(ends, now_ms)
    if not ends or ends <= now_ms then return 1, 1, 0, 0, nil, 0 end
    return 0, 0, ends - now_ms, ends - now_ms, nil, 0
  end,
  refund = function() return nil end,
  block = function(ends, now_ms, ms)
    local next = now_ms + ms
    if ends and ends >= next then return nil end
    return next, ms
  end,
  on_denial = function(ends, now_ms, p)
    local block_ms = p[1]
    if block_ms > 0 then ends = now_ms + block_ms end
    if not ends or ends <= now_ms then return 1, 1, 0, 0, nil, 0 end
    local next = nil
    if block_ms > 0 then next = ends end
    return 0, 0, ends - now_ms, ends - now_ms, next, ends - now_ms
  end,
}
`;
