-- Redisson's write lock acquire script (RedissonWriteLock#tryLockInnerAsync),
-- a test fixture for interoperability. Transcribed from the Java string in
-- Redisson's RedissonWriteLock.java, as ../shared/design/redisson-wire.md
-- ("Read/write lock", write acquire) describes it: one Java string fragment
-- per line, text unchanged (Redisson is Apache-2.0 licensed).
--
-- KEYS[1]  the lock (getRawName())
-- ARGV[1]  the lease in milliseconds (unit.toMillis(leaseTime))
-- ARGV[2]  the owner's writer field (getLockName(threadId), overridden as
--          "<uuid>:<thread-id>:write")
local mode = redis.call('hget', KEYS[1], 'mode'); 
if (mode == false) then 
redis.call('hset', KEYS[1], 'mode', 'write'); 
redis.call('hset', KEYS[1], ARGV[2], 1); 
redis.call('pexpire', KEYS[1], ARGV[1]); 
return nil; 
end; 
if (mode == 'write') then 
if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then 
redis.call('hincrby', KEYS[1], ARGV[2], 1); 
local currentExpire = redis.call('pttl', KEYS[1]); 
redis.call('pexpire', KEYS[1], currentExpire + ARGV[1]); 
return nil; 
end; 
end;
return redis.call('pttl', KEYS[1]);
