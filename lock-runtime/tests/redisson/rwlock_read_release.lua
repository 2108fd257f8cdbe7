-- Redisson's read lock release script (RedissonReadLock#unlockInnerAsync),
-- a test fixture for interoperability. Transcribed from the Java string
-- quoted in ../shared/seeds/000_f8a70611670cf193.txt: one Java string
-- fragment per line, text unchanged (Redisson is Apache-2.0 licensed).
--
-- KEYS[1]  the lock (getName())
-- KEYS[2]  its channel (getChannelName() = "redisson_rwlock:{name}")
-- KEYS[3]  the owner's hold timeouts (timeoutPrefix =
--          "{name}:<owner>:rwlock_timeout")
-- KEYS[4]  the prefix of every owner's hold timeouts (keyPrefix = "{name}")
-- ARGV[1]  LockPubSub.unlockMessage (0)
-- ARGV[2]  the owner (getLockName(threadId))
local mode = redis.call('hget', KEYS[1], 'mode'); 
if (mode == false) then 
redis.call('publish', KEYS[2], ARGV[1]); 
return 1; 
end; 
local lockExists = redis.call('hexists', KEYS[1], ARGV[2]); 
if (lockExists == 0) then 
return nil;
end; 
local counter = redis.call('hincrby', KEYS[1], ARGV[2], -1); 
if (counter == 0) then 
redis.call('hdel', KEYS[1], ARGV[2]); 
end;
redis.call('del', KEYS[3] .. ':' .. (counter+1)); 
if (redis.call('hlen', KEYS[1]) > 1) then 
local maxRemainTime = -3; 
local keys = redis.call('hkeys', KEYS[1]); 
for n, key in ipairs(keys) do 
counter = tonumber(redis.call('hget', KEYS[1], key)); 
if type(counter) == 'number' then 
for i=counter, 1, -1 do 
local remainTime = redis.call('pttl', KEYS[4] .. ':' .. key .. ':rwlock_timeout:' .. i); 
maxRemainTime = math.max(remainTime, maxRemainTime);
end; 
end; 
end; 
if maxRemainTime > 0 then 
redis.call('pexpire', KEYS[1], maxRemainTime); 
return 0; 
end;
if mode == 'write' then 
return 0;
end; 
end; 
redis.call('del', KEYS[1]); 
redis.call('publish', KEYS[2], ARGV[1]); 
return 1; 
