-- The write of the fault tests' read-modify-write: a blind SET of the value
-- computed from the read, and its entry in the write log (idempotent: a
-- retry after a lost reply writes the same). The log is the observer's,
-- not the lock's.
--
-- KEYS[1]  the counter
-- KEYS[2]  the write log: fencing token -> value written
-- ARGV[1]  the value
-- ARGV[2]  the writer's fencing token
redis.call('SET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
return 1
