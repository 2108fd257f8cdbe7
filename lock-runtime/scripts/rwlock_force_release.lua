-- Breaks one side of a read/write lock whoever holds it, and wakes every
-- waiter.
--
-- KEYS[1]  the lock (see rwlock_read_acquire.lua)
-- KEYS[2]  the channel its waiters listen on
-- ARGV[1]  the message that wakes waiters ("1": all of them)
-- ARGV[2]  the publish command: PUBLISH or SPUBLISH
-- ARGV[3]  the side to break: "read" or "write"
--
-- Returns 1 when the lock was held in that mode and is now deleted, 0
-- otherwise. A key that is not a lock is left alone (WRONGTYPE).
local kind = redis.call('type', KEYS[1])['ok']
if kind == 'none' then
  return 0
end
if kind ~= 'hash' then
  return redis.error_reply('WRONGTYPE the key holds a ' .. kind .. ', not a lock')
end
if redis.call('hget', KEYS[1], 'mode') ~= ARGV[3] then
  return 0
end
redis.call('del', KEYS[1])
redis.call(ARGV[2], KEYS[2], ARGV[1])
return 1
