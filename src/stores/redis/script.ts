// The one Lua script the Redis engine runs: the integer prelude, every policy's Lua twin, and the main loop
// that is the twin of `evaluatePolicies`.
import { createHash } from 'node:crypto';
import { integerLua } from '../../integer.js';
import { policyLua } from '../../policies/index.js';
import type { AnyPolicy } from '../../policies/policy.js';

/**
 * KEYS: one per policy.
 * ARGV: now ms ('' = the server's TIME), cost, dry run ('1'/'0'), min/max TTL and TTL padding (ms),
 *       then per policy: kind, argument count, arguments.
 * Reply: { allowed, now, then per policy: allowed, remaining, resetMs, retryAfterMs }.
 *
 * Since Redis 7 the script's TIME is frozen for the whole call and scripts replicate by effects, so the clock
 * read here is consistent and replication-safe, and every application server shares it.
 */
const MAIN = `
local now = tonumber(ARGV[1])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local cost, dry = tonumber(ARGV[2]), ARGV[3] == '1'
local min_ttl, max_ttl, pad = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])

local evaluated, allowed, at = {}, 1, 7
for k = 1, #KEYS do
  local policy, n = policies[ARGV[at]], tonumber(ARGV[at + 1])
  local args = {}
  for j = 1, n do args[j] = tonumber(ARGV[at + 1 + j]) end
  at = at + 2 + n
  local state = policy.load(KEYS[k])
  local ok, remaining, reset, retry, next, ttl = policy.decide(state, now, cost, unpack(args))
  evaluated[k] = { policy = policy, args = args, state = state, next = next, ttl = ttl,
                   result = { ok, remaining, reset, retry } }
  if ok == 0 then allowed = 0 end
end

local reply = { allowed, now }
for k = 1, #KEYS do
  local e = evaluated[k]
  local result = e.result
  if allowed == 1 and not dry and cost > 0 and e.next then
    local ttl = max_ttl
    if e.ttl >= 0 then ttl = math.min(max_ttl, math.max(min_ttl, e.ttl + pad)) end
    e.policy.save(KEYS[k], e.next, ttl)
  elseif allowed == 0 and result[1] == 1 then
    -- Nothing was spent here after all: report this policy's unspent view.
    result = { e.policy.decide(e.state, now, 0, unpack(e.args)) }
  end
  for j = 1, 4 do reply[#reply + 1] = result[j] end
end
return reply
`;

export const SCRIPT = ['local policies = {}', integerLua, ...Object.values(policyLua), MAIN].join('\n');
export const SCRIPT_SHA = createHash('sha1').update(SCRIPT).digest('hex');

const tails = new WeakMap<readonly AnyPolicy[], readonly string[]>();

/** The per-policy part of ARGV, computed once per limiter (the policies array is the limiter's own). */
export function policyArguments(policies: readonly AnyPolicy[]): readonly string[] {
  let tail = tails.get(policies);
  if (tail === undefined) {
    tail = policies.flatMap((p) => [p.kind, String(p.args.length), ...p.args.map(String)]);
    tails.set(policies, tail);
  }
  return tail;
}
