// Concurrency limit: at most `max` requests in flight per identifier, each holding a leased slot, and its Lua twin.
import { type Duration, parseDuration } from '../core/duration.js';
import { configError } from '../core/errors.js';
import { MAX_SPAN, nonNegativeInteger } from '../core/validate.js';
import type { PolicyDescription } from './description.js';
import {
  type Policy,
  type PolicyNameOption,
  type PolicyResult,
  policyName,
  scaledQuota,
  type Transition,
  type Write,
} from './policy.js';

export interface ConcurrencyOptions extends PolicyNameOption {
  /** Most requests in flight at once per identifier. 0 rejects everything. */
  readonly max: number;
  /**
   * The longest a request holds its slot: released when it finishes, and otherwise (a process that died holding it)
   * freed after this. Make it longer than your slowest request.
   */
  readonly leaseMs: Duration;
  /**
   * The retry a denial advises (`Retry-After`), at most: a slot frees as soon as any holder's request ends, so the
   * last lease's expiry would send clients away for far longer than needed. Default 1 second.
   */
  readonly retryAfterMs?: Duration;
}

/** The slots held: `[lease, expiresAt]` pairs, each lease the holder's name and its expiry in epoch ms. */
export type ConcurrencyState = readonly (readonly [lease: string, expiresAt: number])[];

/** Every admitted request is one entry of the state, read on every decision: beyond this a limit costs too much. */
const MAX_HOLDERS = 10_000;

/**
 * A request of any positive cost takes one slot under its lease (a cost of 0 takes none, as a peek); the slot is
 * freed by a refund naming the lease (`decision.release()`), or when the lease expires on the store's clock. The
 * state's retry time is when enough leases expire, at the latest; a release frees a slot sooner, so a decision
 * advises `retryAfterMs` when that comes first.
 *
 * @example
 * // At most 2 exports running per client; a slot is freed when the response ends, or after 5 minutes at most.
 * const exports = createLimiter({ policy: concurrency({ max: 2, leaseMs: '5m' }), scope: 'exports' });
 */
export function concurrency(options: ConcurrencyOptions): Policy<ConcurrencyState> {
  if (typeof options !== 'object' || options === null)
    throw configError('options', 'must be an object', options);
  const max = nonNegativeInteger('max', options.max);
  if (max > MAX_HOLDERS) throw configError('max', `must be at most ${MAX_HOLDERS}`, max);
  const leaseMs = parseDuration('leaseMs', options.leaseMs);
  if (leaseMs >= MAX_SPAN) throw configError('leaseMs', 'must be below 2^51 ms', leaseMs);
  const retryAfterMs = parseDuration('retryAfterMs', options.retryAfterMs ?? 1000);
  if (retryAfterMs >= MAX_SPAN) throw configError('retryAfterMs', 'must be below 2^51 ms', retryAfterMs);
  const name = policyName(options, 'concurrency');
  return {
    kind: 'concurrency',
    name,
    limit: max,
    windowMs: 0,
    retentionMs: leaseMs,
    reservable: false,
    retryHintMs: retryAfterMs,
    args: [max, leaseMs],
    lua: concurrencyLua,
    // Pairs of a lease and its expiry, kept as given.
    stateWidth: 0,
    leased: true,
    quotaUnit: 'concurrent-requests',
    level: 'in-flight',
    // Stryker disable next-line ArrayDeclaration: an entry that is not a pair is no live lease (NaN expiry)
    evaluate: (state, nowMs, cost, lease = '') => transition(max, leaseMs, state ?? [], nowMs, cost, lease),
    // Stryker disable next-line ArrayDeclaration: an entry that is not a pair is no live lease (NaN expiry)
    refund: (state, nowMs, _cost, lease) => release(state ?? [], nowMs, lease),
    // A lease is held until it expires: the state holds one until the last does.
    heldMs: (state, nowMs) => restMs(state, nowMs),
    scale: (share) => concurrency({ name, max: scaledQuota(max, share), leaseMs, retryAfterMs }),
  };
}

function transition(
  max: number,
  leaseMs: number,
  state: ConcurrencyState,
  nowMs: number,
  cost: number,
  lease: string,
): Transition<ConcurrencyState> {
  const live = state.filter(([, expiresAt]) => expiresAt > nowMs);
  // A lease taken again (a retried request) replaces its own slot rather than taking a second one.
  const others = live.filter(([held]) => held !== lease);
  const takes = cost > 0 ? 1 : 0;
  const held = others.length;
  if (held + takes <= max) {
    const next: ConcurrencyState = takes === 1 ? [...others, [lease, nowMs + leaseMs]] : live;
    const rest = restMs(next, nowMs);
    const result = { allowed: true, remaining: max - held - takes, resetMs: rest, retryAfterMs: 0 };
    return { result, next: takes === 1 ? next : undefined, ttlMs: rest };
  }
  return { result: denial(max, live, others, nowMs, takes), next: undefined, ttlMs: 0 };
}

/** Room comes when enough of the other holders' leases expire; a limit of 0 never has any. */
function denial(
  max: number,
  live: ConcurrencyState,
  others: ConcurrencyState,
  nowMs: number,
  takes: number,
): PolicyResult {
  const expiries = others.map(([, expiresAt]) => expiresAt).sort((a, b) => a - b);
  const freed = expiries[others.length - max + takes - 1];
  return {
    allowed: false,
    remaining: Math.max(0, max - others.length),
    resetMs: restMs(live, nowMs),
    // Denied with room for any holder means more holders than room: `freed` is then always one of the expiries.
    retryAfterMs: max === 0 ? -1 : (freed as number) - nowMs,
  };
}

function release(state: ConcurrencyState, nowMs: number, lease: string): Write<ConcurrencyState> | undefined {
  if (lease === '' || !state.some(([held, expiresAt]) => held === lease && expiresAt > nowMs))
    return undefined;
  const next = state.filter(([held, expiresAt]) => held !== lease && expiresAt > nowMs);
  return { next, ttlMs: restMs(next, nowMs) };
}

/** Until the last lease expires: then the state means no holder at all. */
function restMs(state: ConcurrencyState, nowMs: number): number {
  let latest = nowMs;
  for (const [, expiresAt] of state) latest = Math.max(latest, expiresAt);
  return latest - nowMs;
}

/**
 * The Lua twin. The slots are a sorted set, lease -> expiry; `load` reads it whole (at most `max` live leases plus
 * the expired ones the last write left), and a write changes only what moved: it drops the expired leases, then
 * adds or removes the one lease, instead of rewriting the set.
 */
// Stryker disable next-line StringLiteral: Lua text; the differential suite checks it against a real Redis
export const concurrencyLua = `
{
  load = function(key)
    local flat = redis.pcall('ZRANGE', key, 0, -1, 'WITHSCORES')
    if flat.err then return foreign(key, flat) end
    if #flat == 0 then return nil end
    local st = {}
    for i = 1, #flat, 2 do st[#st + 1] = { flat[i], tonumber(flat[i + 1]) } end
    return st
  end,
  save = function(key, d, ttl)
    redis.call('ZREMRANGEBYSCORE', key, '-inf', d.prune)
    if d.add then redis.call('ZADD', key, d.at, d.add) end
    if d.remove then redis.call('ZREM', key, d.remove) end
    if ttl >= 0 then redis.call('PEXPIRE', key, ttl) end
  end,
  decide = function(st, now_ms, cost, p, lease)
    local max, lease_ms = p[1], p[2]
    local live, others = {}, {}
    for _, e in ipairs(st or {}) do
      if e[2] > now_ms then
        live[#live + 1] = e[2]
        if e[1] ~= lease then others[#others + 1] = e[2] end
      end
    end
    local function rest_of(expiries)
      local latest = now_ms
      for _, at in ipairs(expiries) do latest = math.max(latest, at) end
      return latest - now_ms
    end
    local takes = 0
    if cost > 0 then takes = 1 end
    local held = #others
    if held + takes <= max then
      if takes == 0 then return 1, max - held, rest_of(live), 0, nil, 0 end
      others[#others + 1] = now_ms + lease_ms
      local rest = rest_of(others)
      return 1, max - held - 1, rest, 0, { prune = now_ms, add = lease, at = now_ms + lease_ms }, rest
    end
    table.sort(others)
    local retry = -1
    local freed = others[held - max + takes]
    if max > 0 and freed then retry = freed - now_ms end
    return 0, math.max(0, max - held), rest_of(live), retry, nil, 0
  end,
  refund = function(st, now_ms, cost, p, lease)
    if lease == '' then return nil end
    local kept, found = {}, false
    for _, e in ipairs(st or {}) do
      if e[2] > now_ms then
        if e[1] == lease then found = true else kept[#kept + 1] = e[2] end
      end
    end
    if not found then return nil end
    local latest = now_ms
    for _, at in ipairs(kept) do latest = math.max(latest, at) end
    return { prune = now_ms, remove = lease }, latest - now_ms
  end,
}
`;

/** The concurrency limit as the simulator offers it. */
export const concurrencyDescription: PolicyDescription = {
  kind: 'concurrency',
  label: 'Concurrency limit',
  options: ['name', 'max', 'leaseMs', 'retryAfterMs'],
  fields: [
    ['max', 'Max in flight', '2'],
    ['leaseMs', 'Lease (ms or 30s)', '30s'],
  ],
  limitLabel: 'max in flight',
  build: (options) => concurrency(options as unknown as ConcurrencyOptions),
};
