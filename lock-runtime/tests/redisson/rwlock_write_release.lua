-- Redisson's write lock release script (RedissonWriteLock#unlockInnerAsync),
-- a test fixture for interoperability. Transcribed from the script quoted in
-- ../shared/seeds/001_0586bd2c57fd34d4.txt, text unchanged (Redisson is
-- Apache-2.0 licensed). The one line that is a Java comment between two
-- string fragments (`// has unlocked read-locks`) is kept as a Lua comment.
--
-- KEYS[1]  the lock (getName())
-- KEYS[2]  its channel (getChannelName() = "redisson_rwlock:{name}")
-- ARGV[1]  LockPubSub.READ_UNLOCK_MESSAGE (1: wakes every waiter)
-- ARGV[2]  internalLockLeaseTime, in milliseconds
-- ARGV[3]  the owner's writer field (getLockName(threadId) =
--          "<uuid>:<thread-id>:write")
local mode = redis.call('hget', KEYS[1], 'mode'); 
if (mode == false) then 
    redis.call('publish', KEYS[2], ARGV[1]); 
    return 1; 
end;
if (mode == 'write') then 
    local lockExists = redis.call('hexists', KEYS[1], ARGV[3]); 
    if (lockExists == 0) then 
        return nil;
    else 
        local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); 
        if (counter > 0) then 
            redis.call('pexpire', KEYS[1], ARGV[2]); 
            return 0; 
        else 
            redis.call('hdel', KEYS[1], ARGV[3]); 
            if (redis.call('hlen', KEYS[1]) == 1) then 
                redis.call('del', KEYS[1]); 
                redis.call('publish', KEYS[2], ARGV[1]); 
            else
                -- has unlocked read-locks
                redis.call('hset', KEYS[1], 'mode', 'read'); 
            end; 
            return 1; 
        end; 
    end; 
end; 
return nil;
