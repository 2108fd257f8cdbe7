-- Redisson's RLock release script with the unlock latch
-- (RedissonLock#unlockInnerAsync(threadId, requestId, timeout)), a test
-- fixture for interoperability. Transcribed from the Java string quoted in
-- ../shared/seeds/003_507149c91a18657c.txt: one Java string fragment per
-- line, text unchanged (Redisson is Apache-2.0 licensed).
--
-- KEYS[1]  the lock (getRawName())
-- KEYS[2]  its channel (getChannelName() = "redisson_lock__channel:{name}")
-- KEYS[3]  the latch (getUnlockLatchName(requestId) =
--          "redisson_unlock_latch:{name}:<request-id>")
-- ARGV[1]  LockPubSub.UNLOCK_MESSAGE (0)
-- ARGV[2]  internalLockLeaseTime, in milliseconds
-- ARGV[3]  the owner (getLockName(threadId))
-- ARGV[4]  the publish command (PUBLISH, or SPUBLISH)
-- ARGV[5]  the latch's time to live, in milliseconds
local val = redis.call('get', KEYS[3]); 
if val ~= false then 
return tonumber(val);
end; 
if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then 
return nil;
end; 
local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); 
if (counter > 0) then 
redis.call('pexpire', KEYS[1], ARGV[2]); 
redis.call('set', KEYS[3], 0, 'px', ARGV[5]); 
return 0; 
else 
redis.call('del', KEYS[1]); 
redis.call(ARGV[4], KEYS[2], ARGV[1]); 
redis.call('set', KEYS[3], 1, 'px', ARGV[5]); 
return 1; 
end; 
