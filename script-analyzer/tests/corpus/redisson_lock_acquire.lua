-- Reentrant lock acquire, laid out as Redisson's RLock stores it.
-- KEYS[1] lock name (hash: owner -> hold count)
-- ARGV[1] lease in milliseconds, ARGV[2] owner "<uuid>:<thread>"
-- Returns nil when acquired, else the lock's remaining TTL in milliseconds.
if (redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
return redis.call('pttl', KEYS[1])
