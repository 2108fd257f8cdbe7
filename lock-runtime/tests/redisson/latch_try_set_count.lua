-- Redisson's RCountDownLatch trySetCount script (RedissonCountDownLatch#trySetCountAsync), a test fixture for
-- interoperability. Transcribed from redisson/redisson at commit
-- 0482efe14713f6ef660cccbd66118154d72f1425,
-- redisson/src/main/java/org/redisson/RedissonCountDownLatch.java: one Java string fragment per line,
-- text unchanged (Redisson is Apache-2.0 licensed).
--
-- KEYS[1]  the latch; KEYS[2] its channel
-- ARGV[1]  NEW_COUNT_MESSAGE (1); ARGV[2] the count; ARGV[3] the publish
--          command
if redis.call('exists', KEYS[1]) == 0 then 
redis.call('set', KEYS[1], ARGV[2]); 
redis.call(ARGV[3], KEYS[2], ARGV[1]); 
return 1 
else 
return 0 
end
