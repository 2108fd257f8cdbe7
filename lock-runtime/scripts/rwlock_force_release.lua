-- Breaks one side of a read/write lock whoever holds it, wakes every
-- waiter, and advances the fencing token.
--
-- KEYS[1]  the lock (see rwlock_read_acquire.lua)
-- KEYS[2]  the channel its waiters listen on
-- KEYS[3]  the fencing token counter
-- ARGV[1]  the message that wakes waiters (all of them)
-- ARGV[2]  the side to break: 'read' or 'write'
-- ARGV[3]  how long the token counter lives, in milliseconds
-- ARGV[4]  'spublish' to announce on a sharded channel (Redis Cluster 7+),
--          'publish' otherwise
--
-- Returns 1 when the lock was held in that mode and is now deleted, 0
-- otherwise. A key that is not a read/write lock is left alone: WRONGTYPE.
local kind = redis.call('type', KEYS[1])['ok']
if kind == 'none' then
  return 0
end
local mode = kind == 'hash' and redis.call('hget', KEYS[1], 'mode')
if mode ~= 'read' and mode ~= 'write' then
  return redis.error_reply('WRONGTYPE the key holds a ' .. kind .. ' that is not a read/write lock')
end
if mode ~= ARGV[2] then
  return 0
end
local now = redis.call('time')
local token = tonumber(now[1]) * 1000000 + tonumber(now[2])
local last = redis.pcall('get', KEYS[3])
if type(last) == 'string' and tonumber(last) and tonumber(last) >= token then
  token = tonumber(last) + 1
end
redis.call('set', KEYS[3], string.format('%.0f', token), 'px', ARGV[3])
redis.call('del', KEYS[1])
if ARGV[4] == 'spublish' then
  redis.call('spublish', KEYS[2], ARGV[1])
else
  redis.call('publish', KEYS[2], ARGV[1])
end
return 1
