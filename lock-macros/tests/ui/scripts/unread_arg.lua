return redis.call('INCR', KEYS[1])
