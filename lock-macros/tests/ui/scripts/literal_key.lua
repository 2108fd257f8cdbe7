local limit = redis.call('GET', 'config:limit') or '1'
return redis.call('INCRBY', KEYS[1], limit)
