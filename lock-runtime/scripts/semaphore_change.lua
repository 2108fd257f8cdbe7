-- Changes a semaphore stored as Redisson's RSemaphore stores it (a string
-- at the name, the number of permits available), once per request: a
-- retried request returns the first one's result.
--
-- KEYS[1]  the semaphore
-- KEYS[2]  its channel: the permits available are published there when
--          there are some (Redisson's message), to wake waiters
-- KEYS[3]  this request's latch: its result, once it ran
-- KEYS[4]  a leased semaphore's permits taken (Redisson's
--          RPermitExpirableSemaphore: `{name}:timeout`, id -> expiry), for
--          'set_total'
-- ARGV[1]  what to do: 'release' (add ARGV[2] >= 1 permits), 'add' (add
--          ARGV[2], which may be negative), 'set' (set ARGV[2] >= 0), or
--          'try_set' (set ARGV[2] >= 0 if the semaphore does not exist), or
--          'set_total' (a leased semaphore: make the permits available plus
--          those taken ARGV[2] >= 0, as Redisson's setPermits does; with
--          permits taken, fewer than zero may be left available)
-- ARGV[2]  the permits
-- ARGV[3]  how long the latch lives, in milliseconds
-- ARGV[4]  PUBLISH or SPUBLISH
--
-- Returns {changed, available}: changed is 0 only for a 'try_set' that
-- found the semaphore there; available is the permits available after.
-- A key that is not a semaphore is left alone: WRONGTYPE.
local done = redis.call('get', KEYS[3])
if done then
  local changed, available = string.match(done, '^(%d):(-?%d+)$')
  if changed == '1' then
    return {1, tonumber(available) or 0}
  end
  return {0, tonumber(available) or 0}
end
local mode = ARGV[1]
local permits = tonumber(ARGV[2])
if not permits or permits % 1 ~= 0 then
  return redis.error_reply('ERR redlua: invalid permits ' .. ARGV[2])
end
if (mode == 'release' and permits < 1) or ((mode == 'set' or mode == 'try_set' or mode == 'set_total') and permits < 0) then
  return redis.error_reply('ERR redlua: invalid permits ' .. ARGV[2])
end
local kind = redis.call('type', KEYS[1])['ok']
if kind ~= 'none' and kind ~= 'string' then
  return redis.error_reply('WRONGTYPE the key holds a ' .. kind .. ', not a semaphore')
end
local value = redis.call('get', KEYS[1])
if value and not string.match(value, '^-?%d+$') then
  return redis.error_reply('WRONGTYPE the key holds a string that is not a number of permits')
end
local changed = 1
local available = 0
if mode == 'release' or mode == 'add' then
  available = redis.call('incrby', KEYS[1], permits)
elseif mode == 'set' then
  redis.call('set', KEYS[1], permits)
  available = permits
elseif mode == 'set_total' then
  local taken_kind = redis.call('type', KEYS[4])['ok']
  if taken_kind ~= 'none' and taken_kind ~= 'zset' then
    return redis.error_reply('WRONGTYPE the permits taken are a ' .. taken_kind .. ', not a sorted set')
  end
  available = permits - redis.call('zcard', KEYS[4])
  redis.call('set', KEYS[1], available)
elseif mode == 'try_set' then
  if value then
    changed = 0
    available = tonumber(value) or 0
  else
    redis.call('set', KEYS[1], permits)
    available = permits
  end
else
  return redis.error_reply('ERR redlua: unknown semaphore change ' .. mode)
end
if changed == 1 and available > 0 then
  redis.call(ARGV[4], KEYS[2], available)
end
redis.call('set', KEYS[3], changed .. ':' .. available, 'px', ARGV[3])
return {changed, available}
