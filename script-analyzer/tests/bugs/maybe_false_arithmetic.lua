-- Bug: a GET result used in arithmetic. GET answers `false` for a missing
-- key, and `false + n` raises "attempt to perform arithmetic on a boolean
-- value" the first time the counter is used.
-- Reported: class of bug (counters read with GET instead of INCRBY).
-- declared: keys=1 args=1
-- expect: maybe_false 8
local current = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], current + ARGV[1])
return 1
