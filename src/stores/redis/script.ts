// The one Lua script the Redis engine runs: the integer prelude, every policy's Lua twin, and the main loop over a
// batch of decisions, each the twin of `evaluatePolicies` (with a short path for the common single-policy limiter).
import { createHash } from 'node:crypto';
import { integerLua } from '../../integer.js';
import type { Operation, StoreAction } from '../../policies/evaluate.js';
import { policyLua } from '../../policies/index.js';
import type { AnyPolicy } from '../../policies/policy.js';
import type { ScriptClient } from './client.js';

/**
 * A batch: requests of one limiter (same policies, same action), each on its own keys.
 * KEYS: every request's keys (one per policy), request after request.
 * ARGV: now in ms ('' = the server's TIME; tests inject one), min/max TTL (0: none) and TTL padding (ms), the action
 *       ('c' consume, 'p' peek, 'r' refund, 'b' block), the number of policies, each policy's kind and its two
 *       arguments, then per request its cost, its lease ('' for none) and its timing: for a consume how far ahead it
 *       may be booked (ms), for a refund when its units were spent (epoch ms; '' for now), then, comma-separated,
 *       each policy's resetMs in the spending decision when known. With no policies the call
 *       is a probe of the node that owns KEYS[1] (it writes and deletes that key).
 * Reply: { now, then per request: allowed, delay, then per policy: allowed, remaining, resetMs, retryAfterMs };
 *        a request that raised an error (a key of another type, say) has the message in its first place.
 *
 * The script reads TIME once, so every decision of a batch is made at one instant (TIME itself moves on during a
 * call: measured on Redis 7.0), and scripts replicate by their effects (the only way since Redis 7), so replicas
 * store the results rather than re-run the script on their own clock. Every application server shares that clock.
 *
 * Measured in bench/ (Redis 7.0, 64 decisions in flight): a call costs the server ~20 µs, most of it fixed
 * (entering the script, its arguments, TIME, defining the twins), so a batch shares that cost: ~10 µs of server
 * time per decision, and half the commands. Only the policies a batch uses are defined (each twin is a table of
 * closures, rebuilt on every call).
 */
const MAIN = `
local function define(kind)
${Object.entries(policyLua)
  .map(([kind, lua], i) => `  ${i === 0 ? 'if' : 'elseif'} kind == '${kind}' then${lua}`)
  .join('')}  end
  return policies[kind]
end

local now = tonumber(ARGV[1])
if not now then
  local t = redis.call('TIME')
  now = t[1] * 1000 + math.floor(t[2] / 1000)
end
local per = tonumber(ARGV[6])

-- A probe (no policies): the clock and the writes a decision needs, on the node that owns KEYS[1], leaving nothing
-- behind. It fails exactly when decisions would: out of memory, a read-only replica, a failed snapshot.
if per == 0 then
  redis.call('SET', KEYS[1], now, 'PX', 1000)
  redis.call('DEL', KEYS[1])
  return { now }
end

-- A key's TTL from its state's own time to rest, within the store's bounds (a greatest TTL of 0: none); -1 keeps
-- a state that never rests for ever, since expiring it would mint the quota it records as spent.
local min_ttl, max_ttl, ttl_padding = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local function ttl_of(rest)
  local ttl = -1
  if rest >= 0 then ttl = math.max(min_ttl, rest + ttl_padding) end
  if max_ttl > 0 and (ttl < 0 or ttl > max_ttl) then ttl = max_ttl end
  return ttl
end

local specs = {}
for k = 1, per do
  local at = 4 + 3 * k
  specs[k] = { policy = policies[ARGV[at]] or define(ARGV[at]), a = tonumber(ARGV[at + 1]), b = tonumber(ARGV[at + 2]) }
end

local function save(k, key, e, delay)
  if e[5] then
    local rest = e[6]
    if rest >= 0 then rest = rest + delay end
    specs[k].policy.save(key, e[5], ttl_of(rest))
  end
end

-- A denied request that may wait, booked at the instant every policy admits it (all reservable), or nil.
local function book(base, states, evaluated, cost, lease, max_delay)
  local delay = 0
  for k = 1, per do
    local retry = evaluated[k][4]
    if not specs[k].policy.reservable or retry < 0 then return nil end
    delay = math.max(delay, retry)
  end
  if delay > max_delay then return nil end
  local later = {}
  for k = 1, per do
    local s = specs[k]
    later[k] = { s.policy.decide(states[k], now + delay, cost, s.a, s.b, lease) }
    if later[k][1] == 0 then return nil end
  end
  local out = { 1, delay }
  for k = 1, per do
    save(k, KEYS[base + k], later[k], delay)
    for j = 1, 4 do out[#out + 1] = later[k][j] end
  end
  return out
end

-- A consume or a peek, the twin of evaluatePolicies: allowed, delay, then each policy's four figures.
local function evaluate(base, cost, lease, max_delay)
  local states, evaluated, allowed = {}, {}, 1
  for k = 1, per do
    local s = specs[k]
    states[k] = s.policy.load(KEYS[base + k])
    evaluated[k] = { s.policy.decide(states[k], now, cost, s.a, s.b, lease) }
    if evaluated[k][1] == 0 then allowed = 0 end
  end
  if allowed == 0 and max_delay > 0 and action == 'c' then
    local booked = book(base, states, evaluated, cost, lease, max_delay)
    if booked then return unpack(booked) end
  end
  local out = { allowed, 0 }
  for k = 1, per do
    local s, e = specs[k], evaluated[k]
    if allowed == 1 then
      if not dry and cost > 0 then save(k, KEYS[base + k], e, 0) end
    elseif e[1] == 1 then
      if action == 'c' and max_delay == 0 and s.policy.on_denial then
        -- An open lockout starts its block on a denial.
        e = { s.policy.on_denial(states[k], now, s.a, s.b) }
        save(k, KEYS[base + k], e, 0)
      else
        -- Nothing was spent here after all: report this policy's unspent view.
        e = { s.policy.decide(states[k], now, 0, s.a, s.b, lease) }
      end
    end
    for j = 1, 4 do out[#out + 1] = e[j] end
  end
  return unpack(out)
end

-- A refund or a block: each policy's view before it, then its change.
local function change(base, cost, lease, spent)
  local out = { 1, 0 }
  for k = 1, per do
    local s, key = specs[k], KEYS[base + k]
    local state = s.policy.load(key)
    local e = { s.policy.decide(state, now, 0, s.a, s.b, '') }
    for j = 1, 4 do out[#out + 1] = e[j] end
    local next, rest
    if action == 'r' then
      next, rest = s.policy.refund(state, now, cost, s.a, s.b, lease, spent[1] or now, spent[k + 1])
    elseif s.policy.block then
      next, rest = s.policy.block(state, now, cost)
    end
    if next then s.policy.save(key, next, ttl_of(rest)) end
  end
  return unpack(out)
end

-- Request d, on KEYS[(d - 1) * per + 1 ..], with a short path for the common lone policy.
local function decide(d)
  local base, at = (d - 1) * per, 4 + 3 * per + 3 * d
  local cost, lease, timing = tonumber(ARGV[at]), ARGV[at + 1], tonumber(ARGV[at + 2])
  if action == 'r' or action == 'b' then
    local spent = {}
    for figure in string.gmatch(ARGV[at + 2], '[^,]+') do spent[#spent + 1] = tonumber(figure) end
    return change(base, cost, lease, spent)
  end
  local max_delay = timing
  if per == 1 then
    local s, key = specs[1], KEYS[d]
    local ok, remaining, reset, retry, next, rest = s.policy.decide(s.policy.load(key), now, cost, s.a, s.b, lease)
    -- Only a denial that may be booked ahead takes the long way.
    if ok == 1 or max_delay == 0 or action ~= 'c' then
      if ok == 1 and not dry and cost > 0 and next then s.policy.save(key, next, ttl_of(rest)) end
      return ok, 0, ok, remaining, reset, retry
    end
  end
  return evaluate(base, cost, lease, max_delay)
end

local reply = { now }
local function append(done, ...)
  if done then
    for i = 1, select('#', ...) do reply[#reply + 1] = (select(i, ...)) end
    return
  end
  local err = ...
  reply[#reply + 1] = type(err) == 'table' and tostring(err.err) or tostring(err)
  for i = 1, 1 + 4 * per do reply[#reply + 1] = 0 end
end
-- Each request fails alone: one client's broken key must not fail the others batched with it.
for d = 1, #KEYS / per do append(pcall(decide, d)) end
return reply
`;

/**
 * Helpers the twins' `load` calls. A key holding another kind's state (an explicit scope whose policy changed kind)
 * is dropped and read as absent, as MemoryStore does: read as it is, it would fail every decision on that key, and
 * each failure would count against the shard's circuit breaker.
 */
const STATE_LUA = `
local action = ARGV[5]
local dry = action == 'p'
-- A peek writes nothing, not even the removal of a foreign key.
local function forget(key)
  if not dry then redis.call('DEL', key) end
  return nil
end
-- A state that is one integer, or nil: a missing key, or a forgotten foreign one.
local function read_integer(key)
  local v = redis.pcall('GET', key)
  if not v then return nil end
  return tonumber(v) or forget(key)
end
-- A string state with its TTL, or with none (-1) when it never rests.
local function set_state(key, value, ttl)
  if ttl < 0 then redis.call('SET', key, value) else redis.call('SET', key, value, 'PX', ttl) end
end
-- The captures of a string state, or nil: a missing key, or a forgotten foreign one.
local function read_fields(key, pattern)
  local v = redis.pcall('GET', key)
  if not v then return nil end
  if type(v) == 'string' then
    local fields = { string.match(v, pattern) }
    if #fields > 0 then return fields end
  end
  return forget(key)
end
`;

export const SCRIPT = ['local policies = {}', integerLua, STATE_LUA, MAIN].join('\n');
export const SCRIPT_SHA = createHash('sha1').update(SCRIPT).digest('hex');

/** The script's name for each action. */
const ACTION_CODES: Readonly<Record<StoreAction, string>> = {
  consume: 'c',
  peek: 'p',
  refund: 'r',
  block: 'b',
};

/**
 * A request's timing argument: for a refund when its units were spent ('' for now) and each policy's resetMs then
 * (`1700000000000,500,60000`), else how far ahead it may be booked.
 */
export function timingArgument({ action, maxDelayMs, spentAtMs, spentResetMs = [] }: Operation): string {
  if (action !== 'refund') return String(maxDelayMs ?? 0);
  return spentAtMs === undefined ? '' : [spentAtMs, ...spentResetMs].join(',');
}

/** ARGV from the TTL bounds to the last policy: the same for every batch of one limiter and action on one store. */
export function constantArguments(
  policies: readonly AnyPolicy[],
  ttlMs: readonly number[],
  action: StoreAction,
): string[] {
  return [
    ...ttlMs.map(String),
    ACTION_CODES[action],
    String(policies.length),
    ...policies.flatMap((p) => [p.kind, ...p.args.map(String)]),
  ];
}

/**
 * Runs the script by its SHA, and sends it in full only when a server lacks it (a restart, a failover, SCRIPT
 * FLUSH); EVAL also caches it on whichever node owns the keys.
 */
export async function runScript(
  client: ScriptClient,
  keys: string[],
  args: string[],
  metrics: { scriptReloads: number },
): Promise<unknown> {
  try {
    return await client.evalsha(SCRIPT_SHA, keys, args);
  } catch (error) {
    // Only a missing script is cured by sending it.
    if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error;
    metrics.scriptReloads++;
    return client.eval(SCRIPT, keys, args);
  }
}
