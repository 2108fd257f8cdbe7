-- Increments KEYS[1] by ARGV[1] and returns the new value.
return redis.call('INCRBY', KEYS[1], ARGV[1])
