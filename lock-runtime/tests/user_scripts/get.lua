-- Read-only: returns the value of KEYS[1].
return redis.call('GET', KEYS[1])
