local n = redis.call('GET', KEYS[1]) + 1
return n
