// The engine's per-call state and the helpers every policy's Lua twin reads and writes its key with.
/**
 * Helpers the twins' `load` calls. A key holding another kind's state (an explicit scope whose policy changed kind)
 * is dropped and read as absent, as MemoryStore does: read as it is, it would fail every decision on that key, and
 * each failure would count against the shard's circuit breaker.
 */
export const STATE_LUA = `
-- Per call, set by run(): its keys and arguments, and its action (a peek writes nothing).
local KEYS, ARGV, action, dry
-- A peek writes nothing, not even the removal of a foreign key.
local function forget(key)
  if not dry then redis.call('DEL', key) end
  return nil
end
-- What GET gave that is no state: a key of another type (WRONGTYPE) is forgotten, and any other error raised, since
-- a key this node does not serve (its slot moved, or is moving) must fail its request, never be read as new.
local function foreign(key, v)
  if type(v) == 'table' and not string.find(tostring(v.err), '^WRONGTYPE') then error(v) end
  return forget(key)
end
-- A state that is one integer, or nil: a missing key, or a forgotten foreign one.
local function read_integer(key)
  local v = redis.pcall('GET', key)
  if not v then return nil end
  return tonumber(v) or foreign(key, v)
end
-- A string state with its TTL, with none (-1) when it never rests, or keeping the key's own (nil). Numbers go to
-- Redis as text made here: a Lua number argument is written with a float's format, several times the cost.
local function set_state(key, value, ttl)
  if ttl == nil then
    redis.call('SET', key, value, 'KEEPTTL')
  elseif ttl < 0 then
    redis.call('SET', key, value)
  else
    redis.call('SET', key, value, 'PX', string.format('%d', ttl))
  end
end
-- The captures of a string state, or nil: a missing key, or a forgotten foreign one.
local function read_fields(key, pattern)
  local v = redis.pcall('GET', key)
  if not v then return nil end
  if type(v) == 'string' then
    local fields = { string.match(v, pattern) }
    if #fields > 0 then return fields end
  end
  return foreign(key, v)
end
`;
