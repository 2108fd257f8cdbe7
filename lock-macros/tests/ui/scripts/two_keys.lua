local from = redis.call('GET', KEYS[1]) or ''
redis.call('SET', KEYS[2], from)
return 1
