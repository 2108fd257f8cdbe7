-- Bug: a number compared with a string. `tonumber(...)` is a number and
-- ARGV[1] a string: `<` between them raises "attempt to compare number with
-- string" on every call.
-- Reported: class of bug (rate limiters comparing a counter with a limit
-- passed in ARGV).
-- declared: keys=1 args=1
-- expect: number_string_comparison 9
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used < ARGV[1] then
  redis.call('INCR', KEYS[1])
  return 1
end
return 0
