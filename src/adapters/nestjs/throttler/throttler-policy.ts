// @nestjs/throttler's counting as a Tollgate policy kind, with its Lua twin: exact on MemoryStore and RedisStore.
import { ceilDiv } from '../../../core/integer.js';
import type { Policy, PolicyResult, Transition } from '../../../policies/policy.js';

/**
 * `[expiresAt, blockedUntil, ...runs]`: the record's window end, its block's end (0: none), then its live hits as
 * runs `expiry, count`, the hits made in one millisecond one run, so a burst costs one pair whatever its size.
 */
export type ThrottlerState = readonly number[];

/** The figures @nestjs/throttler's storage answers with. */
export interface ThrottlerStorageRecord {
  totalHits: number;
  /** Seconds until the record's window ends. */
  timeToExpire: number;
  isBlocked: boolean;
  /** Seconds until the client may pass again; 0 when it is not blocked. */
  timeToBlockExpire: number;
}

/**
 * A result's `remaining` carries both the hits and the block's seconds, `hits + BLOCK_UNIT * seconds`: every answer
 * admits (so the store writes the state even when the client is blocked, as the record is updated then too), and a
 * store's short reply to an admission keeps three figures only.
 */
const BLOCK_UNIT = 2 ** 24;
/** The most hits a record can count: kept below the unit, one over the limit included. */
export const MAX_THROTTLER_LIMIT = BLOCK_UNIT - 2;
/**
 * The longest `ttl` and `blockDuration`, in ms (about 8.7 years): a block's seconds then stay under 2^28, so
 * `hits + BLOCK_UNIT * seconds` stays under 2^53, exact in a double and in Lua.
 */
export const MAX_THROTTLER_MS = 2 ** 38;

/**
 * Counts as @nestjs/throttler's ThrottlerStorageService does, per key: each hit expires `ttl` ms after it was made;
 * past `limit` live hits a request is blocked. With `blockDuration` above 0 the hit that goes over the limit is
 * counted and starts a block of that length, after which the count starts again from the request that ends it;
 * with 0, a request over the limit is blocked until its oldest hit expires, and not counted. The record's window
 * (its `X-RateLimit-Reset`) opens at a first request and again at the first request after it ended, blocked or not.
 */
export function throttlerPolicy(ttl: number, limit: number, blockDuration: number): Policy<ThrottlerState> {
  return {
    kind: 'nest-throttler',
    name: 'nest-throttler',
    limit,
    windowMs: ttl,
    retentionMs: Math.max(ttl, blockDuration),
    reservable: false,
    args: [ttl, limit, blockDuration],
    lua: throttlerLua,
    // A record of any length, kept as given.
    stateWidth: 0,
    leased: false,
    level: 'window-count',
    evaluate: (state, nowMs) => transition(ttl, limit, blockDuration, state, nowMs),
    refund: () => undefined,
    // No `heldMs`: a block starts on an admission with no lease, which a store never keeps as a promise.
    scale: (share) => throttlerPolicy(ttl, Math.max(1, Math.floor(limit * share)), blockDuration),
  };
}

function transition(
  ttl: number,
  limit: number,
  blockDuration: number,
  state: ThrottlerState | undefined,
  now: number,
): Transition<ThrottlerState> {
  let [expiresAt = now + ttl, blockedUntil = 0, ...runs] = state ?? [];
  runs = liveRuns(runs, now);
  let hits = hitCount(runs);
  if (expiresAt <= now) expiresAt = now + ttl;
  let blocked: boolean;
  let waitMs = 0;
  let counted = 0;
  if (blockDuration <= 0) {
    blocked = hits >= limit;
    if (blocked) {
      waitMs = (hits > 0 ? earliest(runs) : expiresAt) - now;
      counted = 1;
    } else hits = addHit(runs, hits, now + ttl);
  } else {
    blocked = blockedUntil > 0;
    if (!blocked) hits = addHit(runs, hits, now + ttl);
    if (!blocked && hits > limit) {
      blocked = true;
      blockedUntil = now + blockDuration;
    }
    if (blocked && blockedUntil <= now) {
      blocked = false;
      blockedUntil = 0;
      runs = [now + ttl, 1];
      hits = 1;
    }
    if (blocked) waitMs = blockedUntil - now;
  }
  // At rest once the window, the block and every hit have ended.
  let rest = Math.max(expiresAt, blockedUntil);
  for (let i = 0; i < runs.length; i += 2) rest = Math.max(rest, runs[i] as number);
  const blockSeconds = blocked ? ceilDiv(waitMs, 1000) : 0;
  const result: PolicyResult = {
    allowed: true,
    remaining: hits + counted + BLOCK_UNIT * blockSeconds,
    resetMs: expiresAt - now,
    retryAfterMs: 0,
  };
  return { result, next: [expiresAt, blockedUntil, ...runs], ttlMs: rest - now };
}

/** The runs `[expiry, count, ...]` whose hits have not expired at `now`, in a new array. */
function liveRuns(runs: readonly number[], now: number): number[] {
  const live: number[] = [];
  for (let i = 0; i < runs.length; i += 2)
    if ((runs[i] as number) > now) live.push(runs[i] as number, runs[i + 1] as number);
  return live;
}

function hitCount(runs: readonly number[]): number {
  let count = 0;
  for (let i = 1; i < runs.length; i += 2) count += runs[i] as number;
  return count;
}

/** Adds a hit expiring at `expiry` to `runs` (to the last run when it expires then too); returns `hits` + 1. */
function addHit(runs: number[], hits: number, expiry: number): number {
  const last = runs.length - 2;
  if (last >= 0 && runs[last] === expiry) runs[last + 1] = (runs[last + 1] as number) + 1;
  else runs.push(expiry, 1);
  return hits + 1;
}

/** The earliest expiry of the runs (a loop: a spread of a long record would pass the engine's argument limit). */
function earliest(runs: readonly number[]): number {
  let time = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs.length; i += 2) time = Math.min(time, runs[i] as number);
  return time;
}

/** The storage's record from a result of this policy (as `remaining` and `resetMs` carry it). */
export function throttlerRecord(remaining: number, resetMs: number): ThrottlerStorageRecord {
  const timeToBlockExpire = Math.floor(remaining / BLOCK_UNIT);
  return {
    totalHits: remaining - timeToBlockExpire * BLOCK_UNIT,
    timeToExpire: ceilDiv(resetMs, 1000),
    isBlocked: timeToBlockExpire > 0,
    timeToBlockExpire,
  };
}

/** The Lua twin: the record is the string `expiresAt:blockedUntil:run,run,...`, a run `expiry*count` (`expiry`: 1). */
const throttlerLua = `
{
  load = function(key)
    local v = redis.pcall('GET', key)
    if not v then return nil end
    if type(v) == 'string' then
      local expires, blocked, rest = string.match(v, '^(%d+):(%d+):([%d,*]*)$')
      if expires then
        local runs = {}
        for at, count in string.gmatch(rest, '(%d+)%*?(%d*)') do
          runs[#runs + 1] = tonumber(at)
          runs[#runs + 1] = tonumber(count) or 1
        end
        return { tonumber(expires), tonumber(blocked), runs }
      end
    end
    return foreign(key, v)
  end,
  save = function(key, st, ttl)
    local parts, runs = {}, st[3]
    for i = 1, #runs, 2 do
      if runs[i + 1] == 1 then parts[#parts + 1] = string.format('%d', runs[i])
      else parts[#parts + 1] = string.format('%d*%d', runs[i], runs[i + 1]) end
    end
    set_state(key, string.format('%d:%d:', st[1], st[2]) .. table.concat(parts, ','), ttl)
  end,
  decide = function(st, now, cost, p)
    local ttl, limit, block_ms = p[1], p[2], p[3]
    local expires, blocked_until, runs, hits = now + ttl, 0, {}, 0
    if st then
      expires, blocked_until = st[1], st[2]
      local old = st[3]
      for i = 1, #old, 2 do
        if old[i] > now then
          local n = #runs
          runs[n + 1], runs[n + 2] = old[i], old[i + 1]
          hits = hits + old[i + 1]
        end
      end
    end
    if expires <= now then expires = now + ttl end
    local function add(at)
      local n = #runs
      if n > 0 and runs[n - 1] == at then runs[n] = runs[n] + 1
      else runs[n + 1], runs[n + 2] = at, 1 end
      hits = hits + 1
    end
    local blocked, wait, counted = false, 0, 0
    if block_ms <= 0 then
      blocked = hits >= limit
      if blocked then
        counted = 1
        wait = expires - now
        if hits > 0 then
          wait = runs[1]
          for i = 3, #runs, 2 do wait = math.min(wait, runs[i]) end
          wait = wait - now
        end
      else
        add(now + ttl)
      end
    else
      blocked = blocked_until > 0
      if not blocked then add(now + ttl) end
      if not blocked and hits > limit then
        blocked = true
        blocked_until = now + block_ms
      end
      if blocked and blocked_until <= now then
        blocked, blocked_until, runs, hits = false, 0, { now + ttl, 1 }, 1
      end
      if blocked then wait = blocked_until - now end
    end
    local rest = math.max(expires, blocked_until)
    for i = 1, #runs, 2 do rest = math.max(rest, runs[i]) end
    local seconds = 0
    if blocked then seconds = ceil_div(wait, 1000) end
    return 1, hits + counted + ${BLOCK_UNIT} * seconds, expires - now, 0, { expires, blocked_until, runs }, rest - now
  end,
  refund = function() return nil end,
}
`;
