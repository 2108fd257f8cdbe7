-- Redisson's RCountDownLatch countDown script (RedissonCountDownLatch#countDownAsync), a test fixture for
-- interoperability. Transcribed from redisson/redisson at commit
-- 0482efe14713f6ef660cccbd66118154d72f1425,
-- redisson/src/main/java/org/redisson/RedissonCountDownLatch.java: one Java string fragment per line,
-- text unchanged (Redisson is Apache-2.0 licensed).
--
-- KEYS[1]  the latch; KEYS[2] its channel
--          (redisson_countdownlatch__channel__{name})
-- ARGV[1]  ZERO_COUNT_MESSAGE (0); ARGV[2] the publish command
local v = redis.call('decr', KEYS[1]);
if v <= 0 then redis.call('del', KEYS[1]) end;
if v == 0 then redis.call(ARGV[2], KEYS[2], ARGV[1]) end;
