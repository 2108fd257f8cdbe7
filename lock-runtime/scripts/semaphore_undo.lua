-- Undoes an abandoned acquire of a semaphore's permits: gives them back if
-- and only if the attempt took them, and closes the attempt so that a late
-- copy of it does nothing.
--
-- KEYS[1]  the semaphore (Redisson's RSemaphore layout)
-- KEYS[2]  its channel, told of the permits given back
-- KEYS[3]  the attempt's key ('1': it took its permits; '0': closed)
-- ARGV[1]  the permits the attempt asked for (an integer >= 1)
-- ARGV[2]  how long the closed attempt's key lives, in milliseconds
-- ARGV[3]  PUBLISH or SPUBLISH
--
-- Returns 1 when the permits were given back, 0 when the attempt never
-- took them (and now never will).
local permits = tonumber(ARGV[1])
if not permits or permits < 1 or permits % 1 ~= 0 then
  return redis.error_reply('ERR redlua: invalid permits ' .. ARGV[1])
end
local attempt = redis.call('get', KEYS[3])
if attempt == '1' then
  local kind = redis.call('type', KEYS[1])['ok']
  if kind ~= 'none' and kind ~= 'string' then
    return redis.error_reply('WRONGTYPE the key holds a ' .. kind .. ', not a semaphore')
  end
  local value = redis.call('get', KEYS[1])
  if value and not string.match(value, '^-?%d+$') then
    return redis.error_reply('WRONGTYPE the key holds a string that is not a number of permits')
  end
  local available = redis.call('incrby', KEYS[1], permits)
  redis.call(ARGV[3], KEYS[2], available)
  redis.call('set', KEYS[3], '0', 'px', ARGV[2])
  return 1
end
if attempt ~= '0' then
  redis.call('set', KEYS[3], '0', 'px', ARGV[2])
end
return 0
