-- Bug: SET ... EX 0. Redis refuses a zero or negative expire time ("invalid
-- expire time in 'set' command"): the value is never written.
-- Reported: class of bug (a TTL of 0 meant as "no expiry").
-- declared: keys=1 args=1
-- expect: invalid_expire 6
return redis.call('SET', KEYS[1], ARGV[1], 'EX', 0)
