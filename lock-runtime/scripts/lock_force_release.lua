-- Breaks a reentrant lock whoever holds it, and wakes its waiters.
--
-- KEYS[1]  the lock
-- KEYS[2]  the channel its waiters listen on
-- ARGV[1]  the message that wakes a waiter ("0")
-- ARGV[2]  the publish command: PUBLISH or SPUBLISH
--
-- Returns 1 when a lock was deleted, 0 when there was none. A key that is
-- not a lock (not a hash) is left alone and reported as WRONGTYPE.
local kind = redis.call('type', KEYS[1])['ok']
if kind == 'none' then
  return 0
end
if kind ~= 'hash' then
  return redis.error_reply('WRONGTYPE the key holds a ' .. kind .. ', not a lock')
end
redis.call('del', KEYS[1])
redis.call(ARGV[2], KEYS[2], ARGV[1])
return 1
