-- Breaks a reentrant lock whoever holds it, wakes its waiters, and advances
-- its fencing token (a resource then refuses the broken holder's writes).
--
-- KEYS[1]  the lock
-- KEYS[2]  the channel its waiters listen on
-- KEYS[3]  the fencing token counter
-- ARGV[1]  the message that wakes a waiter
-- ARGV[2]  how long the token counter lives, in milliseconds
-- ARGV[3]  'spublish' to announce on a sharded channel (Redis Cluster 7+),
--          'publish' otherwise
--
-- Returns 1 when a lock was deleted, 0 when there was none. A key that is
-- not a reentrant lock is left alone: WRONGTYPE.
local kind = redis.call('type', KEYS[1])['ok']
if kind == 'none' then
  return 0
end
local pair = kind == 'hash' and redis.call('hlen', KEYS[1]) == 1 and redis.call('hgetall', KEYS[1]) or {}
if not (pair[1] and string.match(pair[1], ':%d+$') and string.match(pair[2], '^%d+$')) then
  return redis.error_reply('WRONGTYPE the key holds a ' .. kind .. ' that is not a reentrant lock')
end
local now = redis.call('time')
local token = tonumber(now[1]) * 1000000 + tonumber(now[2])
local last = redis.pcall('get', KEYS[3])
if type(last) == 'string' and tonumber(last) and tonumber(last) >= token then
  token = tonumber(last) + 1
end
redis.call('set', KEYS[3], string.format('%.0f', token), 'px', ARGV[2])
redis.call('del', KEYS[1])
if ARGV[3] == 'spublish' then
  redis.call('spublish', KEYS[2], ARGV[1])
else
  redis.call('publish', KEYS[2], ARGV[1])
end
return 1
