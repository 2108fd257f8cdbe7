-- Releases one hold of a reentrant lock, idempotently.
--
-- KEYS[1]  the lock (hash of owner -> hold count)
-- KEYS[2]  the channel its waiters listen on
-- KEYS[3]  this release's latch: remembers the result for a retried release
-- ARGV[1]  the message that wakes a waiter ("0")
-- ARGV[2]  the lease, in milliseconds, for the holds that remain
-- ARGV[3]  the owner
-- ARGV[4]  the publish command: PUBLISH, or SPUBLISH for sharded pub/sub
-- ARGV[5]  how long the latch is kept, in milliseconds
-- ARGV[6]  "" (or absent, as Redisson sends it) to release, or the hold
--          count the owner must have (the undo of an acquire whose reply
--          was lost): otherwise nothing changes
--
-- Returns 1 when the lock is now free (and waiters were told), 0 when the
-- owner still holds it (hold count down by one, lease started again), nil
-- when the owner does not hold it, -1 when ARGV[6] did not match. A release
-- retried with the same latch returns the first result.
local earlier = redis.call('get', KEYS[3])
if earlier then
  return tonumber(earlier)
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
if ARGV[6] and ARGV[6] ~= '' and tonumber(redis.call('hget', KEYS[1], ARGV[3])) ~= tonumber(ARGV[6]) then
  return -1
end
if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  redis.call('set', KEYS[3], 0, 'px', ARGV[5])
  return 0
end
redis.call('del', KEYS[1])
redis.call(ARGV[4], KEYS[2], ARGV[1])
redis.call('set', KEYS[3], 1, 'px', ARGV[5])
return 1
