-- Adds ARGV[1] to the counter KEYS[1], which expires after ARGV[2] seconds.
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return value
