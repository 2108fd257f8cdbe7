-- Bug: an integer reply used as a condition. EXISTS answers 0 or 1, and 0 is
-- true in Lua, so the branch is always taken: the "create if absent" below
-- never creates anything.
-- Reported: class of bug (Redis's EVAL documentation: an integer reply
-- becomes a Lua number).
-- declared: keys=1 args=1
-- expect: integer_condition 10
local key = KEYS[1]
local exists = redis.call('EXISTS', key)
if exists then
  return 0
end
redis.call('SET', key, ARGV[1])
return 1
