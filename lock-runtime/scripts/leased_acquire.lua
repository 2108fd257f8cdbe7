-- Takes leased permits of a semaphore stored as Redisson's
-- RPermitExpirableSemaphore stores it: a string at the name, the permits
-- available; a sorted set `{name}:timeout` of the permits taken, each a
-- 16-byte id scored by its expiry (ms since the epoch).
--
-- Permits whose expiry passed go back to the pool first, each exactly once
-- (removed from the set and counted back in one step).
--
-- KEYS[1]  the semaphore (permits available)
-- KEYS[2]  the permits taken: id -> expiry in ms
-- KEYS[3]  the channel: the permits available, when expired ones came back
-- KEYS[4]  this attempt's key: the fencing token once the attempt took its
--          permits, '0' once it was abandoned (a late copy must do nothing)
-- KEYS[5]  the fencing token counter
-- ARGV[1]  the lease, in milliseconds (an integer >= 1)
-- ARGV[2]  how long the attempt's key lives, in milliseconds
-- ARGV[3]  how long the token counter lives, in milliseconds
-- ARGV[4]  PUBLISH or SPUBLISH
-- ARGV[5..] the ids of the permits to take, one per permit
--
-- Returns {code, a, b}:
--   {1, token, available}  the attempt holds its permits, each with a lease
--                          of at least ARGV[1] from now (taken now, or by
--                          an earlier copy whose reply was lost)
--   {0, wait, available}   too few permits; `wait`: ms until the first
--                          permit taken expires (-1: none)
--   {3, 0, 0}              the attempt was abandoned before this copy ran,
--                          or its permits are gone since (a late copy)
-- Errors, before anything is written: WRONGTYPE for keys that are not such
-- a semaphore; 'ERR redlua: more permits than the pool' when the pool
-- (available plus taken) is smaller than the permits asked for.
local lease = tonumber(ARGV[1])
if not lease or lease < 1 or lease % 1 ~= 0 then
  return redis.error_reply('ERR redlua: invalid lease ' .. ARGV[1])
end
local permits = #ARGV - 4
if permits < 1 then
  return redis.error_reply('ERR redlua: no permit ids')
end
local attempt = redis.call('get', KEYS[4])
if attempt == '0' then
  return {3, 0, 0}
end
local kind = redis.call('type', KEYS[1])['ok']
if kind ~= 'none' and kind ~= 'string' then
  return redis.error_reply('WRONGTYPE the key holds a ' .. kind .. ', not a semaphore')
end
local taken_kind = redis.call('type', KEYS[2])['ok']
if taken_kind ~= 'none' and taken_kind ~= 'zset' then
  return redis.error_reply('WRONGTYPE the permits taken are a ' .. taken_kind .. ', not a sorted set')
end
local value = redis.call('get', KEYS[1])
if value and not string.match(value, '^-?%d+$') then
  return redis.error_reply('WRONGTYPE the key holds a string that is not a number of permits')
end
local available = tonumber(value) or 0
if not attempt and value and permits > available + redis.call('zcard', KEYS[2]) then
  return redis.error_reply('ERR redlua: more permits than the pool')
end

local now = redis.call('time')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local expiry = now_ms + lease

if attempt then
  -- An earlier copy of this attempt took its permits (its reply was lost).
  local held = 0
  for i = 5, #ARGV do
    if redis.call('zscore', KEYS[2], ARGV[i]) then
      held = held + 1
    end
  end
  if held < permits then
    -- They are gone (released, expired, taken away): this copy comes
    -- late, and takes nothing.
    return {3, 0, 0}
  end
  -- Their leases run at least `lease` from now, as this copy's caller
  -- counts them.
  for i = 5, #ARGV do
    if (tonumber(redis.call('zscore', KEYS[2], ARGV[i])) or 0) < expiry then
      redis.call('zadd', KEYS[2], expiry, ARGV[i])
    end
  end
  return {1, tonumber(attempt) or 0, available}
end

-- Expired permits come back, each once.
local expired = redis.call('zrangebyscore', KEYS[2], '-inf', now_ms, 'limit', 0, 1000)
if #expired > 0 then
  redis.call('zrem', KEYS[2], unpack(expired))
  available = redis.call('incrby', KEYS[1], #expired)
  if available > 0 then
    redis.call(ARGV[4], KEYS[3], available)
  end
end

if available < permits then
  local first = redis.call('zrange', KEYS[2], 0, 0, 'withscores')
  local wait = -1
  if first[2] then
    wait = math.max(0, (tonumber(first[2]) or now_ms) - now_ms)
  end
  return {0, wait, available}
end

-- The next fencing token: above every earlier one, and above the server's
-- clock in microseconds, so that it keeps growing after the counter expired.
local token = tonumber(now[1]) * 1000000 + tonumber(now[2])
local last = redis.pcall('get', KEYS[5])
if type(last) == 'string' and tonumber(last) and tonumber(last) >= token then
  token = tonumber(last) + 1
end
redis.call('set', KEYS[5], string.format('%.0f', token), 'px', ARGV[3])

available = redis.call('decrby', KEYS[1], permits)
for i = 5, #ARGV do
  redis.call('zadd', KEYS[2], expiry, ARGV[i])
end
redis.call('set', KEYS[4], string.format('%.0f', token), 'px', ARGV[2])
return {1, token, available}
