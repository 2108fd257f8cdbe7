-- Bug: a table with string keys returned. Redis converts only the array
-- part of a table: `{count = n, ttl = t}` arrives as an empty array.
-- Reported: class of bug (Redis's EVAL documentation: only the array part
-- is converted).
-- declared: keys=1 args=0
-- expect: return_shape 9
local n = redis.call('INCR', KEYS[1])
local t = redis.call('TTL', KEYS[1])
return {count = n, ttl = t}
