// The engine's loop over one call's decisions, in Lua: it reads the call format (call-format.ts), and each decision
// is the twin of `evaluatePolicies`, with a short path for a lone policy.

/**
 * The script reads TIME once, so every decision of a batch is made at one instant (TIME itself moves on during a
 * call: measured on Redis 7.0), and scripts replicate by their effects (the only way since Redis 7), so replicas
 * store the results rather than re-run the script on their own clock. Every application server shares that clock.
 *
 * As a function, a call costs the server a fixed part whatever it carries (entering it, its arguments, TIME), which
 * a batch shares; each decision then costs its commands (read, write, and the TTL read back) and the twin's
 * arithmetic (figures in docs/benchmarks.md). A twin is defined when a call first needs it: once for a function
 * library, on every call for a script.
 *
 * It follows the definitions of the twins the engine carries (`define`, see engine.ts).
 */
export const MAIN_LUA = `

-- What one call is about, set by run() for each: its clock, its policies, the store's TTL bounds.
local now, per, min_ttl, max_ttl, ttl_padding, quantum, specs

-- A key's TTL from its state's own time to rest, within the store's bounds (a greatest TTL of 0: none); -1 keeps
-- a state that never rests for ever, since expiring it would mint the quota it records as spent. At least 1 ms:
-- Redis refuses an expiry of 0, which a state just come to rest would ask for without a least TTL or padding.
local function ttl_of(rest)
  local ttl = -1
  if rest >= 0 then ttl = math.max(min_ttl, rest + ttl_padding, 1) end
  if max_ttl > 0 and (ttl < 0 or ttl > max_ttl) then ttl = max_ttl end
  return ttl
end

-- A state over the one it replaces (nil: none). Setting an expiry is most of a write's cost (SET with PX costs
-- far more than with KEEPTTL), so a write keeps the key's TTL while it still covers the new state: the time
-- that state comes to rest plus the padding. When it must set one, it sets that time rounded up to a quantum, so
-- that the states that follow share it: a window sets its expiry once, a bucket written often once per quantum. The
-- TTL is read back (PTTL) rather than inferred from the state it replaces, since another limit under the
-- same scope, another store's padding or an earlier version may have set it. A greatest TTL ties the expiry to the
-- clock instead, so with one every write sets it.
local function write(spec, key, next, prev, rest)
  local policy = spec.policy
  local at_rest = policy.at_rest
  if rest < 0 or max_ttl > 0 or not at_rest then return policy.save(key, next, ttl_of(rest), prev) end
  local ttl = quantum * math.ceil((at_rest(next, spec.p) + ttl_padding) / quantum) - now
  if prev and redis.call('PTTL', key) >= ttl then return policy.save(key, next, nil, prev) end
  policy.save(key, next, math.max(ttl_of(rest), ttl), prev)
end

local function save(k, key, e, prev, delay)
  if e[5] then
    local rest = e[6]
    if rest >= 0 then rest = rest + delay end
    write(specs[k], key, e[5], prev, rest)
  end
end

-- A request's reply, from reply[at + 1] on: allowed, delay, then each policy's four figures. A consume or a peek
-- of a lone policy, the common call, answers with its policy's figures alone, the delay of an admission in place
-- of its retry (always 0): each number of a reply costs the server time to write.
local reply, narrow, width
local function answer(at, allowed, delay, evaluated)
  if narrow then
    local e = evaluated[1]
    local last = e[4]
    if allowed == 1 then last = delay end
    reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4] = allowed, e[2], e[3], last
    return
  end
  reply[at + 1], reply[at + 2] = allowed, delay
  for k = 1, per do
    local e = evaluated[k]
    at = at + 4
    reply[at - 1], reply[at], reply[at + 1], reply[at + 2] = e[1], e[2], e[3], e[4]
  end
end

-- A denied request that may wait, booked at the instant every policy admits it (all reservable); false if not.
local function book(at, base, states, evaluated, cost, lease, max_delay)
  local delay = 0
  for k = 1, per do
    local retry = evaluated[k][4]
    if not specs[k].policy.reservable or retry < 0 then return false end
    delay = math.max(delay, retry)
  end
  if delay > max_delay then return false end
  local later = {}
  for k = 1, per do
    local s = specs[k]
    later[k] = { s.policy.decide(states[k], now + delay, cost, s.p, lease) }
    if later[k][1] == 0 then return false end
  end
  for k = 1, per do save(k, KEYS[base + k], later[k], states[k], delay) end
  answer(at, 1, delay, later)
  return true
end

-- A consume or a peek, the twin of evaluatePolicies.
local function evaluate(at, base, cost, lease, max_delay, waiting)
  local states, evaluated, allowed = {}, {}, 1
  for k = 1, per do
    local s = specs[k]
    states[k] = s.policy.load(KEYS[base + k])
    evaluated[k] = { s.policy.decide(states[k], now, cost, s.p, lease) }
    if evaluated[k][1] == 0 then allowed = 0 end
  end
  if allowed == 0 and max_delay > 0 and action == 'c' and book(at, base, states, evaluated, cost, lease, max_delay) then
    return
  end
  for k = 1, per do
    local s, e, key = specs[k], evaluated[k], KEYS[base + k]
    if allowed == 1 then
      if not dry and cost > 0 then save(k, key, e, states[k], 0) end
    elseif e[1] == 1 then
      if action == 'c' and max_delay == 0 and not waiting and s.policy.on_denial then
        -- An open lockout starts its block on a denial.
        e = { s.policy.on_denial(states[k], now, s.p) }
        save(k, key, e, states[k], 0)
      else
        -- Nothing was spent here after all: report this policy's unspent view.
        e = { s.policy.decide(states[k], now, 0, s.p, lease) }
      end
      evaluated[k] = e
    end
  end
  answer(at, allowed, 0, evaluated)
end

-- A refund or a block: each policy's view before it, then its change. Every state is read before any is written:
-- a key that fails to read (in a cluster, one not on this node) fails the request with nothing changed, so that
-- it may be sent again.
local function change(at, base, cost, lease, spent)
  local evaluated, states = {}, {}
  for k = 1, per do
    local s = specs[k]
    states[k] = s.policy.load(KEYS[base + k])
    evaluated[k] = { s.policy.decide(states[k], now, 0, s.p, '') }
  end
  for k = 1, per do
    local s, key, state = specs[k], KEYS[base + k], states[k]
    local next, rest
    if action == 'r' then
      next, rest = s.policy.refund(state, now, cost, s.p, lease, spent[1] or now, spent[k + 1])
    elseif s.policy.block then
      next, rest = s.policy.block(state, now, cost)
    end
    if next then write(s, key, next, state, rest) end
  end
  answer(at, 1, 0, evaluated)
end

-- Each request's cost, lease and timing: one triple shared by every request of the call (read once; none sent for
-- the common cost 1, no lease, no wait), or one each;
-- and the lone policy's twin and arguments, for the short path.
local shared, cost1, lease1, timing1, max_delay1, waiting1, lone, load1, decide1, p1
local function read_figures(arg)
  local timing = ARGV[arg + 2]
  local max_delay = tonumber(timing)
  -- A waiting caller's consume says 'w' first: its denial starts no lockout.
  if max_delay then return tonumber(ARGV[arg]), ARGV[arg + 1], timing, max_delay, false end
  return tonumber(ARGV[arg]), ARGV[arg + 1], timing, tonumber(string.sub(timing, 2)), true
end

-- Request d, on KEYS[(d - 1) * per + 1 ..], answered from reply[(d - 1) * width + 2] on, with a short path for the
-- common lone policy (a consume or a peek, answered narrow): the lone-policy short paths are listed at
-- evaluatePolicies.
local function decide(d)
  local base, at = (d - 1) * per, 1 + (d - 1) * width
  local cost, lease, timing, max_delay, waiting = cost1, lease1, timing1, max_delay1, waiting1
  if not shared then cost, lease, timing, max_delay, waiting = read_figures(3 + 3 * (d - 1)) end
  if action == 'r' or action == 'b' then
    local spent = {}
    for figure in string.gmatch(timing, '[^,]+') do spent[#spent + 1] = tonumber(figure) end
    return change(at, base, cost, lease, spent)
  end
  if per == 1 then
    local key = KEYS[d]
    local state = load1(key)
    local ok, remaining, reset, retry, next, rest = decide1(state, now, cost, p1, lease)
    -- Only a denial that may be booked ahead takes the long way.
    if ok == 1 or max_delay == 0 or action ~= 'c' then
      if ok == 1 and not dry and cost > 0 and next then write(lone, key, next, state, rest) end
      reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4] = ok, remaining, reset, retry
      return
    end
  end
  evaluate(at, base, cost, lease, max_delay, waiting)
end

-- Requests first to last, current naming the one being decided.
local current
local function decide_from(first, last)
  for d = first, last do
    current = d
    decide(d)
  end
end

-- Limiters' specs, parsed, by their text (ARGV[2]): a limiter sends the same one on every call, so a function
-- library parses it once rather than on every call, where parsing it was about a quarter of a lone decision's
-- server time. A fleet's limiters are few; should their specs grow past a bound, the table starts again.
local parsed, parsed_count = {}, 0
local function parse(text)
  local w, c = {}, { specs = {} }
  for word in string.gmatch(text, '%S+') do w[#w + 1] = word end
  c.min_ttl, c.max_ttl, c.ttl_padding, c.action, c.per = tonumber(w[1]), tonumber(w[2]), tonumber(w[3]), w[4], tonumber(w[5])
  c.quantum = math.max(1000, math.floor(c.ttl_padding / 8))
  -- Each policy: its kind, the number of its parameters, then those.
  local at = 6
  for k = 1, c.per do
    local kind, count, p = w[at], tonumber(w[at + 1]), {}
    for i = 1, count do p[i] = tonumber(w[at + 1 + i]) end
    c.specs[k] = { policy = policies[kind] or define(kind), p = p }
    at = at + 2 + count
  end
  c.narrow = c.per == 1 and (c.action == 'c' or c.action == 'p')
  c.width = 2 + 4 * c.per
  if c.narrow then c.width = 4 end
  if parsed_count == 256 then parsed, parsed_count = {}, 0 end
  parsed[text], parsed_count = c, parsed_count + 1
  return c
end

-- A call to one node of a cluster declares no keys: its keys, of several slots, lead its arguments after the
-- clock and the spec, counted (call-format.ts).
local function node_call(args)
  local n = tonumber(args[3])
  return { unpack(args, 4, 3 + n) }, { args[1], args[2], unpack(args, 4 + n) }
end

-- One call, on its keys and arguments (see call-format.ts).
local function run(keys, args)
  if #keys == 0 then keys, args = node_call(args) end
  KEYS, ARGV = keys, args
  local c = parsed[ARGV[2]] or parse(ARGV[2])
  action, dry, per = c.action, c.action == 'p', c.per
  now = tonumber(ARGV[1])
  if not now then
    local t = redis.call('TIME')
    now = t[1] * 1000 + math.floor(t[2] / 1000)
  end
  -- A probe (no policies): the clock and the writes a decision needs, on the node that owns KEYS[1], leaving
  -- nothing behind. It fails exactly when decisions would: out of memory, a read-only replica, a failed snapshot.
  if per == 0 then
    redis.call('SET', KEYS[1], now, 'PX', 1000)
    redis.call('DEL', KEYS[1])
    return { now }
  end
  min_ttl, max_ttl, ttl_padding, quantum, specs = c.min_ttl, c.max_ttl, c.ttl_padding, c.quantum, c.specs
  reply, narrow, width = { now }, c.narrow, c.width
  shared = #ARGV <= 5
  if #ARGV == 2 then
    cost1, lease1, timing1, max_delay1, waiting1 = 1, '', '0', 0, false
  else
    cost1, lease1, timing1, max_delay1, waiting1 = read_figures(3)
  end
  lone = specs[1]
  load1, decide1, p1 = lone.policy.load, lone.policy.decide, lone.p
  -- Each request fails alone: one client's broken key must not fail the others batched with it. One protected
  -- run takes every request until one fails, and the next run goes on after it.
  local count, d = #KEYS / per, 1
  while d <= count do
    local done, err = pcall(decide_from, d, count)
    if done then break end
    d = current
    local at = 1 + (d - 1) * width
    reply[at + 1] = type(err) == 'table' and tostring(err.err) or tostring(err)
    for i = at + 2, at + width do reply[i] = 0 end
    d = d + 1
  end
  return reply
end
`;
