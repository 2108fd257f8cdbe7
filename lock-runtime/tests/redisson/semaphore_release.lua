-- Redisson's RSemaphore release script (RedissonSemaphore#releaseAsync), a test fixture for
-- interoperability. Transcribed from redisson/redisson at commit
-- 0482efe14713f6ef660cccbd66118154d72f1425,
-- redisson/src/main/java/org/redisson/RedissonSemaphore.java: one Java string fragment per line,
-- text unchanged (Redisson is Apache-2.0 licensed).
--
-- KEYS[1]  the semaphore; KEYS[2] its channel (redisson_sc:{name})
-- ARGV[1]  the permits; ARGV[2] the publish command
local value = redis.call('incrby', KEYS[1], ARGV[1]); 
redis.call(ARGV[2], KEYS[2], value); 
