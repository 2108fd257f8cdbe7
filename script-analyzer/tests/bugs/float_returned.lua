-- Bug: a computed float returned. Redis converts a Lua number to an integer
-- reply by truncation: a ratio of 0.75 arrives as 0.
-- Reported: class of bug (Redis's EVAL documentation: "Lua number -> Redis
-- integer reply (the number is converted into an integer)").
-- declared: keys=2 args=0
-- expect: non_integer_return 9
local used = redis.call('SCARD', KEYS[1])
local limit = redis.call('SCARD', KEYS[2])
return used / limit
