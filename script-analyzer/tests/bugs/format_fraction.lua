-- Bug: string.format('%d', ...) of a fraction. Lua 5.1 truncates the
-- number silently: a bucket computed from a halved timestamp is off by one
-- half of the time.
-- Reported: class of bug.
-- declared: keys=1 args=1
-- expect: fractional_argument 7
local bucket = string.format('%d', ARGV[1] / 2)
return redis.call('INCR', KEYS[1] .. ':' .. bucket)
