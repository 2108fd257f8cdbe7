return redis.cal('GET', KEYS[1])
