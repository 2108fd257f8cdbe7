-- Releases one write hold of a read/write lock, idempotently.
--
-- KEYS[1]  the lock (see rwlock_read_acquire.lua)
-- KEYS[2]  the channel its waiters listen on
-- KEYS[3]  this release's latch
-- ARGV[1]  the message that wakes waiters ("1": all of them)
-- ARGV[2]  the lease, in milliseconds, for the holds that remain
-- ARGV[3]  the owner's writer field, <owner>:write
-- ARGV[4]  the publish command: PUBLISH or SPUBLISH
-- ARGV[5]  how long the latch is kept, in milliseconds
-- ARGV[6]  "" to release, or the hold count the owner must have (the undo
--          of an acquire whose reply was lost): otherwise nothing changes
--
-- Returns 1 when the write lock is released (the lock is free, or only the
-- owner's read holds remain: readers may enter, and are woken), 0 when the
-- owner still holds it, nil when it does not, -1 when ARGV[6] did not match.
local earlier = redis.call('get', KEYS[3])
if earlier then
  return tonumber(earlier)
end
if redis.call('hget', KEYS[1], 'mode') ~= 'write' then
  return nil
end
local held = tonumber(redis.call('hget', KEYS[1], ARGV[3]))
if held == nil then
  return nil
end
if ARGV[6] ~= '' and held ~= tonumber(ARGV[6]) then
  return -1
end
if held > 1 then
  redis.call('hincrby', KEYS[1], ARGV[3], -1)
  redis.call('pexpire', KEYS[1], ARGV[2])
  redis.call('set', KEYS[3], 0, 'px', ARGV[5])
  return 0
end
redis.call('hdel', KEYS[1], ARGV[3])
if redis.call('hlen', KEYS[1]) == 1 then
  redis.call('del', KEYS[1])
else
  -- The owner keeps reading (a downgrade): other readers may enter now.
  redis.call('hset', KEYS[1], 'mode', 'read')
end
redis.call(ARGV[4], KEYS[2], ARGV[1])
redis.call('set', KEYS[3], 1, 'px', ARGV[5])
return 1
