-- Redisson's RLock acquire script (RedissonLock#tryLockInnerAsync), a test
-- fixture for interoperability. Transcribed from the Java string quoted in
-- ../shared/seeds/003_507149c91a18657c.txt: one Java string fragment per
-- line, text unchanged (Redisson is Apache-2.0 licensed).
--
-- KEYS[1]  the lock (getRawName())
-- ARGV[1]  the lease in milliseconds (unit.toMillis(leaseTime))
-- ARGV[2]  the owner (getLockName(threadId) = "<uuid>:<thread-id>")
if ((redis.call('exists', KEYS[1]) == 0) 
or (redis.call('hexists', KEYS[1], ARGV[2]) == 1)) then 
redis.call('hincrby', KEYS[1], ARGV[2], 1); 
redis.call('pexpire', KEYS[1], ARGV[1]); 
return nil; 
end; 
return redis.call('pttl', KEYS[1]);
