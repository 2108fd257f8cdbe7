-- Bug: a status reply compared with a string. SET answers a status reply,
-- which Lua receives as the table `{ok = 'OK'}`: it is never equal to 'OK',
-- so the script always reports failure.
-- Reported: class of bug (Redis's EVAL documentation: a status reply
-- becomes a table with a single `ok` field).
-- declared: keys=1 args=1
-- expect: status_comparison 8
if redis.call('SET', KEYS[1], ARGV[1]) == 'OK' then
  return 1
end
return 0
