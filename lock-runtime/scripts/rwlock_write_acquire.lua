-- Acquires, or re-enters, the write side of a read/write lock stored as
-- Redisson stores it.
--
-- KEYS[1]  the lock (see rwlock_read_acquire.lua)
-- KEYS[2]  the mark a waiting writer leaves when writers are preferred
-- ARGV[1]  the lease, in milliseconds
-- ARGV[2]  the owner's writer field, <owner>:write
-- ARGV[3]  the owner's reader field, <owner>
-- ARGV[4]  "1" when writers are preferred: leave the mark while waiting
-- ARGV[5]  how long the mark lives, in milliseconds (the writer renews it
--          each time it tries again)
--
-- Returns nil when the owner now holds the write lock, otherwise how long
-- to wait at most, in milliseconds. An owner holding only read locks gets
-- the error LOCKUPGRADE: it would wait for itself forever.
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  redis.call('hset', KEYS[1], 'mode', 'write')
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  redis.call('del', KEYS[2])
  return nil
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if mode == 'read' and redis.call('hexists', KEYS[1], ARGV[3]) == 1 then
  return redis.error_reply('LOCKUPGRADE the owner holds the read lock; upgrading to write would wait forever')
end
if ARGV[4] == '1' then
  redis.call('set', KEYS[2], ARGV[2], 'px', ARGV[5])
end
return redis.call('pttl', KEYS[1])
