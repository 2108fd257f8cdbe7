-- Bug: a `redis.pcall` result used without checking `err`. When INCRBY
-- fails (the value is not an integer), pcall answers the table
-- `{err = ...}`, and the comparison below raises "attempt to compare table
-- with number" instead of reporting the error.
-- Reported: class of bug.
-- declared: keys=1 args=2
-- expect: pcall_unchecked 9
local total = redis.pcall('INCRBY', KEYS[1], ARGV[1])
if total > tonumber(ARGV[2]) then
  return 0
end
return 1
