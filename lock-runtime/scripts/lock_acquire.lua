-- Acquires, or re-enters, a reentrant lock stored as Redisson stores it.
--
-- KEYS[1]  the lock: a hash of owner -> hold count, whose TTL is the lease
-- ARGV[1]  the lease, in milliseconds
-- ARGV[2]  the owner, "<client-uuid>:<owner-id>"
--
-- Returns nil when the owner now holds the lock (its hold count went up by
-- one and the lease starts again), or the lock's remaining time to live in
-- milliseconds when another owner holds it.
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])
