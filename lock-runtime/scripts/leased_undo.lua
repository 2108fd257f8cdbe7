-- Undoes an abandoned acquire of leased permits: gives its permits back if
-- and only if the attempt took them and they are still taken, and closes
-- the attempt so that a late copy of it does nothing.
--
-- KEYS[1]  the semaphore (permits available)
-- KEYS[2]  the permits taken: id -> expiry in ms
-- KEYS[3]  the channel: the permits available, after
-- KEYS[4]  the attempt's key (a token: it took its permits; '0': closed)
-- ARGV[1]  how long the closed attempt's key lives, in milliseconds
-- ARGV[2]  PUBLISH or SPUBLISH
-- ARGV[3..] the attempt's permit ids
--
-- Returns how many permits came back.
local attempt = redis.call('get', KEYS[4])
if attempt == '0' then
  return 0
end
redis.call('set', KEYS[4], '0', 'px', ARGV[1])
if not attempt then
  return 0
end
local kind = redis.call('type', KEYS[1])['ok']
if kind ~= 'none' and kind ~= 'string' then
  return redis.error_reply('WRONGTYPE the key holds a ' .. kind .. ', not a semaphore')
end
local released = 0
for i = 3, #ARGV do
  released = released + redis.call('zrem', KEYS[2], ARGV[i])
end
if released > 0 then
  local available = redis.call('incrby', KEYS[1], released)
  if available > 0 then
    redis.call(ARGV[2], KEYS[3], available)
  end
end
return released
