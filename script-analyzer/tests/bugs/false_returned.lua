-- Bug: `false` returned for "no". Redis converts a Lua `false` into a nil
-- reply, not 0, so a caller expecting an integer (`returns = i64`) gets a
-- type error whenever the lock is already held.
-- Reported: class of bug (Redis's EVAL documentation: "Lua boolean false ->
-- Redis Nil bulk reply").
-- declared: keys=1 args=2
-- returns: integer
-- expect: nil_return 12
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
return false
