-- Sets KEYS[1] to ARGV[1] and returns the stored value.
redis.call('SET', KEYS[1], ARGV[1])
return redis.call('GET', KEYS[1])
