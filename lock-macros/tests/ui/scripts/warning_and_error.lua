local n = redis.call('GET', KEYS[1]) + 1
return redis.call('INCRBY', KEYS[2], n)
