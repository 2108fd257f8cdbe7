-- Changes a count-down latch stored as Redisson's RCountDownLatch stores it
-- (a string at the name, the count; no key once it reached zero), once per
-- request: a retried request returns the first one's result.
--
-- KEYS[1]  the latch
-- KEYS[2]  its channel: '0' when the latch opens (the count reached zero,
--          or the latch was deleted), '1' when a new count was set
-- KEYS[3]  this request's latch key: its result, once it ran
-- ARGV[1]  what to do: 'count_down', 'try_set' (set ARGV[2] >= 1 if there
--          is no count) or 'delete'
-- ARGV[2]  the count, for 'try_set'
-- ARGV[3]  how long the request's latch key lives, in milliseconds
-- ARGV[4]  PUBLISH or SPUBLISH
--
-- Returns {changed, count}: whether it changed anything, and the count
-- after (0: open). A key that is not a count-down latch is left alone:
-- WRONGTYPE.
local done = redis.call('get', KEYS[3])
if done then
  local changed, count = string.match(done, '^(%d):(%d+)$')
  if changed == '1' then
    return {1, tonumber(count) or 0}
  end
  return {0, tonumber(count) or 0}
end
local mode = ARGV[1]
local kind = redis.call('type', KEYS[1])['ok']
if kind ~= 'none' and kind ~= 'string' then
  return redis.error_reply('WRONGTYPE the key holds a ' .. kind .. ', not a count-down latch')
end
local value = redis.call('get', KEYS[1])
if value and not string.match(value, '^-?%d+$') then
  return redis.error_reply('WRONGTYPE the key holds a string that is not a count')
end
local count = value and tonumber(value) or 0
local changed = 0
if mode == 'count_down' then
  if value then
    changed = 1
    count = redis.call('decr', KEYS[1])
    if count <= 0 then
      count = 0
      redis.call('del', KEYS[1])
      redis.call(ARGV[4], KEYS[2], '0')
    end
  end
elseif mode == 'try_set' then
  local wanted = tonumber(ARGV[2])
  if not wanted or wanted < 1 or wanted % 1 ~= 0 then
    return redis.error_reply('ERR redlua: invalid count ' .. ARGV[2])
  end
  if not value then
    changed = 1
    count = wanted
    redis.call('set', KEYS[1], ARGV[2])
    redis.call(ARGV[4], KEYS[2], '1')
  end
elseif mode == 'delete' then
  if value then
    changed = 1
    count = 0
    redis.call('del', KEYS[1])
    redis.call(ARGV[4], KEYS[2], '0')
  end
else
  return redis.error_reply('ERR redlua: unknown latch change ' .. mode)
end
if count < 0 then
  count = 0
end
redis.call('set', KEYS[3], changed .. ':' .. count, 'px', ARGV[3])
return {changed, count}
