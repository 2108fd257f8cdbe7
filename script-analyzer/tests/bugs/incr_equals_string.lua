-- Bug: a number tested for equality with a string. INCR answers a number,
-- and in Lua `1 == '1'` is false: the first hit never sets the window's
-- expiry, and the counter lives forever.
-- Reported: class of bug (fixed-window rate limiters).
-- declared: keys=1 args=1
-- expect: number_string_comparison 7
if redis.call('INCR', KEYS[1]) == '1' then
  redis.call('EXPIRE', KEYS[1], ARGV[1])
end
return 1
