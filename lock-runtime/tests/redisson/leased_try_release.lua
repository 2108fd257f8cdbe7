-- Redisson's RPermitExpirableSemaphore release script (tryReleaseAsync(permitId)), a test fixture for
-- interoperability. Transcribed from redisson/redisson at commit
-- 017b8306b450d6970ef7a5244e89c1c14bbab571,
-- redisson/src/main/java/org/redisson/RedissonPermitExpirableSemaphore.java:
-- one Java string fragment per line, text unchanged (Redisson is Apache-2.0
-- licensed).
--
-- KEYS[1]  the semaphore; KEYS[2] the channel; KEYS[3] the permits taken
-- ARGV[1]  the permit id (16 raw bytes); ARGV[2] 1; ARGV[3] now (the
--          client's clock, ms); ARGV[4] the publish command
local expire = redis.call('zscore', KEYS[3], ARGV[1]);
local removed = redis.call('zrem', KEYS[3], ARGV[1]);
if tonumber(removed) ~= 1 then 
return 0;
end;
local value = redis.call('incrby', KEYS[1], ARGV[2]); 
redis.call(ARGV[4], KEYS[2], value); 
if tonumber(expire) <= tonumber(ARGV[3]) then 
return 0;
end;
return 1;
