local value = redis.call('GETT', KEYS[1])
total = value
return redis.cal('GET', KEYS[3])
