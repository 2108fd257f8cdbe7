local value = redis.call('GET', KEYS[1])
return value
return false
