local limit = redis.call('GET', 'config:limit')
return redis.call('INCRBY', KEYS[1], limit)
