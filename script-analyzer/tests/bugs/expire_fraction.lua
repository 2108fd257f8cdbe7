-- Bug: EXPIRE with a fraction. A TTL in milliseconds divided by 1000 is
-- fractional (1500 / 1000 = 1.5): Redis refuses it with "value is not an
-- integer or out of range", after the SET already happened.
-- Reported: class of bug (milliseconds converted to seconds in the script).
-- declared: keys=1 args=2
-- expect: fractional_argument 8
redis.call('SET', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2] / 1000)
return 1
