-- Bug: a reply compared with nil. A nil bulk reply arrives in Lua as
-- `false`, never `nil`, so `owner == nil` is never true and the lock is
-- never taken.
-- Reported: class of bug (Redis's EVAL documentation: "Redis Nil bulk reply
-- -> Lua false boolean type").
-- declared: keys=1 args=2
-- expect: nil_comparison 9
local owner = redis.call('GET', KEYS[1])
if owner == nil then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
