-- Takes permits of a semaphore stored as Redisson's RSemaphore stores it:
-- a string at the name, the number of permits available.
--
-- KEYS[1]  the semaphore
-- KEYS[2]  this attempt's key: '1' once the attempt took its permits, '0'
--          once it was abandoned (a late copy of it must do nothing)
-- ARGV[1]  the permits to take (an integer >= 1)
-- ARGV[2]  how long the attempt's key lives, in milliseconds
--
-- Returns {code, value}:
--   {1, available}  the attempt holds its permits (taken now, or by an
--                   earlier copy of it whose reply was lost); the permits left
--   {0, available}  too few permits: how many there are
--   {3, 0}          the attempt was abandoned before this copy of it ran
-- A key that is not a semaphore is left alone: WRONGTYPE.
local permits = tonumber(ARGV[1])
if not permits or permits < 1 or permits % 1 ~= 0 then
  return redis.error_reply('ERR redlua: invalid permits ' .. ARGV[1])
end
local attempt = redis.call('get', KEYS[2])
if attempt == '0' then
  return {3, 0}
end
local kind = redis.call('type', KEYS[1])['ok']
if kind ~= 'none' and kind ~= 'string' then
  return redis.error_reply('WRONGTYPE the key holds a ' .. kind .. ', not a semaphore')
end
local available = 0
local value = redis.call('get', KEYS[1])
if value then
  if not string.match(value, '^-?%d+$') then
    return redis.error_reply('WRONGTYPE the key holds a string that is not a number of permits')
  end
  available = tonumber(value) or 0
end
if attempt == '1' then
  return {1, available}
end
if available < permits then
  return {0, available}
end
available = redis.call('decrby', KEYS[1], permits)
redis.call('set', KEYS[2], '1', 'px', ARGV[2])
return {1, available}
