-- Bug: HGETALL indexed by a field name. Under RESP2 HGETALL answers a flat
-- array `{field1, value1, field2, value2, ...}`, so `job.state` is always
-- nil and the job is never seen as done.
-- Reported: class of bug (Redis's EVAL documentation: a map reply arrives
-- as a flat array under RESP2).
-- declared: keys=1 args=0
-- expect: flat_reply_index 9
local job = redis.call('HGETALL', KEYS[1])
if job.state == 'done' then
  return 1
end
return 0
