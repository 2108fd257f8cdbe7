-- Literal commands, a pcall, a computed name and two calls on one line.
local n = redis.call('INCR', KEYS[1])
local ok = redis.pcall('hset', KEYS[2], 'f', n)
local v = redis.call(ARGV[1], KEYS[1])
redis.call('DEL', KEYS[2]); redis.call('Publish', 'c', 'm')
return n
