// Token bucket, stored GCRA-style as one integer (the theoretical arrival time), and its Lua twin.
import { configError } from '../core/errors.js';
import { ceilDiv, floorDiv } from '../core/integer.js';
import { MAX_SPAN, nonNegativeInteger, nonNegativeNumber } from '../core/validate.js';
import type { PolicyDescription } from './description.js';
import {
  type Policy,
  type PolicyNameOption,
  policyName,
  scaledQuota,
  type Transition,
  type Write,
} from './policy.js';

export interface TokenBucketOptions extends PolicyNameOption {
  /** Most tokens held: the burst size. Defaults to `requestsPerMinute`. 0 rejects everything. */
  readonly capacity?: number;
  /** Tokens added per second, continuously. May be fractional (0.5) or 0 (a bucket that never refills). */
  readonly refillPerSecond?: number;
  /** Shorthand for `refillPerSecond: requestsPerMinute / 60` (the familiar way to state a rate). */
  readonly requestsPerMinute?: number;
}

/** One token per microsecond: the finest interval the integer engine represents. */
const MAX_RATE = 1_000_000;

/**
 * GCRA: the state is the time (µs) at which the bucket will be full again, `tat`. Spending `cost` tokens moves
 * it `cost * interval` later, and a request passes while `tat` stays within `capacity * interval` of now.
 * One integer, nothing on a timer, and a denial writes nothing. Time inside is in microseconds so that rates
 * above 1,000 per second keep an integer interval; the interval is rounded up, so the rate never exceeds the
 * configured one.
 *
 * @example
 * // Bursts of up to 20, refilled at 5 per second.
 * const limiter = createLimiter({ policy: tokenBucket({ capacity: 20, refillPerSecond: 5 }) });
 */
export function tokenBucket(options: TokenBucketOptions): Policy<number> {
  const { requestsPerMinute } = options;
  if (requestsPerMinute !== undefined) nonNegativeNumber('requestsPerMinute', requestsPerMinute);
  if (requestsPerMinute !== undefined && options.refillPerSecond !== undefined) {
    throw configError('refillPerSecond', 'cannot be combined with `requestsPerMinute`');
  }
  const perSecond =
    options.refillPerSecond ?? (requestsPerMinute === undefined ? undefined : requestsPerMinute / 60);
  if (perSecond === undefined) throw configError('refillPerSecond', 'is required (or `requestsPerMinute`)');
  nonNegativeNumber('refillPerSecond', perSecond);
  if (perSecond > MAX_RATE)
    throw configError(
      'refillPerSecond',
      `must be at most ${MAX_RATE} (one token per microsecond)`,
      perSecond,
    );
  if (
    options.capacity === undefined &&
    requestsPerMinute !== undefined &&
    !Number.isInteger(requestsPerMinute)
  ) {
    throw configError(
      'requestsPerMinute',
      'must be a whole number unless `capacity` is given (it is the default capacity)',
      requestsPerMinute,
    );
  }
  const capacity = nonNegativeInteger('capacity', options.capacity ?? requestsPerMinute);
  // 1e-9 absorbs float noise such as 1e6 / 0.1 = 10000000.000000002, which must stay 10 s, not 10 s + 1 µs.
  const interval = perSecond === 0 ? 0 : Math.ceil(1_000_000 / perSecond - 1e-9);
  // The time to refill from empty must stay exact in both engines: below 2^51 µs, about 71 years.
  if (interval >= MAX_SPAN) {
    const option = requestsPerMinute === undefined ? 'refillPerSecond' : 'requestsPerMinute';
    throw configError(
      option,
      'must be 0 (never refills) or more than one token per 2^51 microseconds (about 71 years)',
      requestsPerMinute ?? perSecond,
    );
  }
  if (capacity * interval >= MAX_SPAN) {
    throw configError(
      'capacity',
      'times the refill interval must stay below 2^51 microseconds (about 71 years)',
      capacity,
    );
  }
  const name = policyName(options, 'token-bucket');
  const windowMs = ceilDiv(capacity * interval, 1000);
  return {
    kind: 'token-bucket',
    name,
    limit: capacity,
    windowMs,
    // A bucket that never refills stays spent for ever: forgetting it would refill it.
    retentionMs: interval > 0 ? windowMs : -1,
    reservable: true,
    args: [capacity, interval],
    lua: tokenBucketLua,
    stateWidth: 1,
    leased: false,
    level: 'tokens',
    evaluate: (tat, nowMs, cost) => transition(capacity, interval, tat, nowMs, cost),
    refund: (tat, nowMs, cost, _lease, spentAtMs, spentResetMs) =>
      refund(interval, tat, nowMs, cost, spentAtMs, spentResetMs),
    // A bucket that never refills counts tokens, not time: nothing in it is ever booked ahead.
    heldMs: interval > 0 ? (tat, nowMs) => bookedMs(capacity * interval, tat, nowMs) : () => 0,
    scale: (share) =>
      tokenBucket({ name, capacity: scaledQuota(capacity, share), refillPerSecond: perSecond * share }),
  };
}

function transition(
  capacity: number,
  interval: number,
  tat: number | undefined,
  nowMs: number,
  cost: number,
): Transition<number> {
  const refills = interval > 0;
  // A bucket that never refills lives on a frozen clock, where tat simply counts the tokens spent.
  const now = refills ? nowMs * 1000 : 0;
  const step = refills ? interval : 1;
  const tau = capacity * step;
  // A clock that went backwards finds tat ahead of it: nothing is minted, and nothing written is lost.
  const base = Math.max(tat ?? now, now);
  const next = base + cost * step;
  if (next - tau <= now) {
    const restMs = refills ? ceilDiv(next - now, 1000) : -1;
    return {
      result: {
        allowed: true,
        remaining: floorDiv(tau - (next - now), step),
        resetMs: restMs,
        retryAfterMs: 0,
      },
      next,
      ttlMs: restMs,
    };
  }
  return {
    result: {
      allowed: false,
      remaining: Math.max(0, floorDiv(tau - (base - now), step)),
      resetMs: refills ? ceilDiv(base - now, 1000) : -1,
      // Waiting helps only when tokens come back and the cost fits in a full bucket.
      retryAfterMs: refills && cost <= capacity ? ceilDiv(next - tau - now, 1000) : -1,
    },
    next: undefined,
    ttlMs: 0,
  };
}

/** Until `tat` owes no more than a full bucket (`tau`): an admission booked ahead by `wait` is held that long. */
function bookedMs(tau: number, tat: number, nowMs: number): number {
  const ahead = tat - tau - nowMs * 1000;
  // Stryker disable next-line EqualityOperator: nothing ahead is 0 either way
  return ahead > 0 ? ceilDiv(ahead, 1000) : 0;
}

/**
 * Moves `tat` back by what the refunded tokens still hold back, never before now (a bucket holds at most its
 * capacity). Spent tokens join the end of the refill's queue: they come back during the `cost x interval` before
 * the full-again time that spend made, so what is still owed is that time less now, at most `cost x interval`.
 * The spending decision's `resetMs` names that time to the ms, rounded up; with an interval of whole ms it is exact,
 * else up to 999 µs is taken off, so a refund never hands back what the refill has given already. Without it only
 * `spentAt + cost x interval` is sure (a full bucket at the spend). A bucket that never refills owes them all.
 */
function refund(
  interval: number,
  tat: number | undefined,
  nowMs: number,
  cost: number,
  spentAtMs: number,
  spentResetMs: number | undefined,
): Write<number> | undefined {
  const refills = interval > 0;
  const now = refills ? nowMs * 1000 : 0;
  let owed = cost;
  if (refills) {
    let full = spentAtMs * 1000 + cost * interval;
    if (spentResetMs !== undefined)
      full = Math.max(full, (spentAtMs + spentResetMs) * 1000 - (interval % 1000 === 0 ? 0 : 999));
    owed = Math.min(cost * interval, full - now);
  }
  if (tat === undefined || tat <= now || owed <= 0) return undefined;
  const next = Math.max(now, tat - owed);
  return { next, ttlMs: refills ? ceilDiv(next - now, 1000) : -1 };
}

/**
 * The Lua twin: the same steps on the same integers; state is one integer string (`tat` in µs, or the tokens spent
 * by a bucket that never refills), which Redis keeps as a 64-bit integer. A key whose TTL still fits moves `tat`
 * with INCRBY, in place (cheaper than SET with KEEPTTL: docs/benchmarks.md); a new value is written with
 * `%d`, exact below 2^53 and faster than letting Redis format a Lua number.
 */
// Stryker disable next-line StringLiteral: Lua text; the differential suite checks it against a real Redis
export const tokenBucketLua = `
{
  reservable = true,
  at_rest = function(tat) return 0 - math.floor((0 - tat) / 1000) end,
  load = read_integer,
  save = function(key, tat, ttl, prev)
    if ttl then set_state(key, string.format('%d', tat), ttl) else redis.call('INCRBY', key, string.format('%d', tat - prev)) end
  end,
  decide = function(tat, now_ms, cost, p)
    local capacity, interval = p[1], p[2]
    local refills = interval > 0
    local now, step = 0, 1
    if refills then now, step = now_ms * 1000, interval end
    local tau = capacity * step
    local base = math.max(tat or now, now)
    local next = base + cost * step
    if next - tau <= now then
      local rest = -1
      if refills then rest = ceil_div(next - now, 1000) end
      return 1, floor_div(tau - (next - now), step), rest, 0, next, rest
    end
    local reset, retry = -1, -1
    if refills then reset = ceil_div(base - now, 1000) end
    if refills and cost <= capacity then retry = ceil_div(next - tau - now, 1000) end
    return 0, math.max(0, floor_div(tau - (base - now), step)), reset, retry, nil, 0
  end,
  refund = function(tat, now_ms, cost, p, lease, spent_at, spent_reset)
    local interval = p[2]
    local refills = interval > 0
    local now, owed = 0, cost
    if refills then
      local full = spent_at * 1000 + cost * interval
      if spent_reset then
        local slack = 999
        if interval % 1000 == 0 then slack = 0 end
        full = math.max(full, (spent_at + spent_reset) * 1000 - slack)
      end
      now, owed = now_ms * 1000, math.min(cost * interval, full - now_ms * 1000)
    end
    if not tat or tat <= now or owed <= 0 then return nil end
    local next = math.max(now, tat - owed)
    local rest = -1
    if refills then rest = ceil_div(next - now, 1000) end
    return next, rest
  end,
}
`;

/** The token bucket as the simulator offers it. */
export const tokenBucketDescription: PolicyDescription = {
  kind: 'token-bucket',
  label: 'Token bucket',
  options: ['name', 'capacity', 'refillPerSecond', 'requestsPerMinute'],
  fields: [
    ['capacity', 'Capacity', '5'],
    ['refillPerSecond', 'Refill per second', '1'],
  ],
  limitLabel: 'capacity',
  build: (options) => tokenBucket(options as TokenBucketOptions),
};
