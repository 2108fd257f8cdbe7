-- Redisson's RSemaphore trySetPermits script (RedissonSemaphore#trySetPermitsAsync), a test fixture for
-- interoperability. Transcribed from redisson/redisson at commit
-- 0482efe14713f6ef660cccbd66118154d72f1425,
-- redisson/src/main/java/org/redisson/RedissonSemaphore.java: one Java string fragment per line,
-- text unchanged (Redisson is Apache-2.0 licensed).
--
-- KEYS[1]  the semaphore; KEYS[2] its channel
-- ARGV[1]  the permits; ARGV[2] the publish command
local value = redis.call('get', KEYS[1]); 
if (value == false) then 
redis.call('set', KEYS[1], ARGV[1]); 
redis.call(ARGV[2], KEYS[2], ARGV[1]); 
return 1;
end;
return 0;
