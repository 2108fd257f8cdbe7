-- Redisson's RPermitExpirableSemaphore acquire script (tryAcquireAsync(ids, timeoutDate)), a test fixture for
-- interoperability. Transcribed from redisson/redisson at commit
-- 017b8306b450d6970ef7a5244e89c1c14bbab571,
-- redisson/src/main/java/org/redisson/RedissonPermitExpirableSemaphore.java:
-- one Java string fragment per line, text unchanged (Redisson is Apache-2.0
-- licensed).
--
-- KEYS[1]  the semaphore; KEYS[2] the permits taken ({name}:timeout);
--          KEYS[3] the channel (redisson_sc:{name})
-- ARGV[1]  the number of permits; ARGV[2] their expiry (ms since the epoch,
--          the client's clock); ARGV[3] now (the client's clock); ARGV[4]
--          the "no expiry" score 922337203685477; ARGV[5] the publish
--          command; ARGV[6..] the permit ids (16 raw bytes each)
local expiredIds = redis.call('zrangebyscore', KEYS[2], 0, ARGV[3], 'limit', 0, ARGV[1]); 
if #expiredIds > 0 then 
redis.call('zrem', KEYS[2], unpack(expiredIds)); 
local value = redis.call('incrby', KEYS[1], #expiredIds); 
if tonumber(value) > 0 then 
redis.call(ARGV[5], KEYS[3], value); 
end;
end; 
local value = redis.call('get', KEYS[1]); 
if (value ~= false and tonumber(value) >= tonumber(ARGV[1])) then 
redis.call('decrby', KEYS[1], ARGV[1]); 
for i = 6, #ARGV, 1 do 
redis.call('zadd', KEYS[2], ARGV[2], ARGV[i]); 
end; 
local ttl = redis.call('pttl', KEYS[1]); 
if ttl > 0 then 
redis.call('pexpire', KEYS[2], ttl); 
end; 
return 'OK'; 
end; 
local v = redis.call('zrange', KEYS[2], 0, 0, 'WITHSCORES'); 
if v[1] ~= nil and v[2] ~= ARGV[4] then 
return ':' .. tostring(v[2]); 
end 
return nil;
