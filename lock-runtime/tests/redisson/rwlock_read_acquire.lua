-- Redisson's read lock acquire script (RedissonReadLock#tryLockInnerAsync),
-- a test fixture for interoperability. Transcribed from the Java string in
-- Redisson's RedissonReadLock.java, as ../shared/design/redisson-wire.md
-- ("Read/write lock", read acquire) describes it: one Java string fragment
-- per line, text unchanged (Redisson is Apache-2.0 licensed).
--
-- KEYS[1]  the lock (getRawName())
-- KEYS[2]  the owner's hold timeouts (getReadWriteTimeoutNamePrefix(threadId)
--          = "{name}:<owner>:rwlock_timeout"; hold N lives at KEYS[2]:N)
-- ARGV[1]  the lease in milliseconds (unit.toMillis(leaseTime))
-- ARGV[2]  the owner (getLockName(threadId) = "<uuid>:<thread-id>")
-- ARGV[3]  the owner's writer field (getWriteLockName(threadId) =
--          "<uuid>:<thread-id>:write")
local mode = redis.call('hget', KEYS[1], 'mode'); 
if (mode == false) then 
redis.call('hset', KEYS[1], 'mode', 'read'); 
redis.call('hset', KEYS[1], ARGV[2], 1); 
redis.call('set', KEYS[2] .. ':1', 1); 
redis.call('pexpire', KEYS[2] .. ':1', ARGV[1]); 
redis.call('pexpire', KEYS[1], ARGV[1]); 
return nil; 
end; 
if (mode == 'read') or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then 
local ind = redis.call('hincrby', KEYS[1], ARGV[2], 1); 
local key = KEYS[2] .. ':' .. ind;
redis.call('set', key, 1); 
redis.call('pexpire', key, ARGV[1]); 
local remainTime = redis.call('pttl', KEYS[1]); 
redis.call('pexpire', KEYS[1], math.max(remainTime, ARGV[1])); 
return nil; 
end;
return redis.call('pttl', KEYS[1]);
