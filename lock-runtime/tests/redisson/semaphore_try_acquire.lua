-- Redisson's RSemaphore acquire script (RedissonSemaphore#tryAcquireAsync0), a test fixture for
-- interoperability. Transcribed from redisson/redisson at commit
-- 0482efe14713f6ef660cccbd66118154d72f1425,
-- redisson/src/main/java/org/redisson/RedissonSemaphore.java: one Java string fragment per line,
-- text unchanged (Redisson is Apache-2.0 licensed).
--
-- KEYS[1]  the semaphore (getRawName())
-- ARGV[1]  the permits
local value = redis.call('get', KEYS[1]); 
if (value ~= false and tonumber(value) >= tonumber(ARGV[1])) then 
local val = redis.call('decrby', KEYS[1], ARGV[1]); 
return 1; 
end; 
return 0;
