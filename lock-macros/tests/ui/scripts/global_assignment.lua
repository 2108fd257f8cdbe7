local count = redis.call('INCR', KEYS[1])
last_count = count
return count
