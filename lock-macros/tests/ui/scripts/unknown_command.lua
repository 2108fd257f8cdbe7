return redis.call('hincrbyy', KEYS[1], 'hits', 1)
