-- Idioms the type-aware lints must accept: defaults for missing values,
-- replies tested before use, status replies read through `ok`, flat
-- replies walked in pairs, SCAN cursors compared as strings, integral
-- arguments rounded on purpose, pcall results checked.
-- KEYS[1] a counter, KEYS[2] a hash, KEYS[3] a set to scan
-- ARGV[1] a TTL in milliseconds, ARGV[2] an increment
local ttl_ms = tonumber(ARGV[1]) or 60000
local step = tonumber(ARGV[2]) or 1

-- A missing counter reads as 0.
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local previous = redis.call('GET', KEYS[1])
if previous == false then
  previous = '0'
end
if redis.call('SET', KEYS[1], current + step, 'PX', ttl_ms).ok ~= 'OK' then
  return redis.error_reply('SET failed')
end
redis.call('EXPIRE', KEYS[1], math.floor(ttl_ms / 1000) + 1)

-- A hash read whole is a flat list of pairs.
redis.call('HSET', KEYS[2], 'owner', 'me', 'state', 'done')
local fields = redis.call('HGETALL', KEYS[2])
local hash = {}
for i = 1, #fields, 2 do
  hash[fields[i]] = fields[i + 1]
end
local state = redis.call('HGET', KEYS[2], 'state')
if not state then
  state = 'new'
end

-- SCAN until the cursor comes back as the string '0'.
redis.call('SADD', KEYS[3], 'a', 'b', 'c')
local seen = 0
local cursor = '0'
repeat
  local page = redis.call('SSCAN', KEYS[3], cursor, 'COUNT', 10)
  cursor = page[1]
  seen = seen + #page[2]
until cursor == '0'

-- An error under pcall is looked at before the result is used.
local bumped = redis.pcall('INCRBY', KEYS[1], step)
if type(bumped) == 'table' and bumped.err then
  return bumped
end
local label = string.format('%s=%d', hash.owner or '?', bumped)

if redis.call('EXISTS', KEYS[2]) == 1 and redis.call('TYPE', KEYS[2]).ok == 'hash' then
  return {label, state, previous, seen}
end
return {label, state, previous, seen, 0}
