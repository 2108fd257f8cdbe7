-- Bug: nil inside a returned array. Redis converts a Lua array up to its
-- first nil: `{1, nil, ttl}` arrives as `[1]`, and the caller reads a
-- missing TTL.
-- Reported: class of bug (Redis's EVAL documentation: an array is
-- "truncated to the first nil inside the Lua array").
-- declared: keys=1 args=0
-- expect: return_shape 9
local ttl = redis.call('PTTL', KEYS[1])
return {1, nil, ttl}
