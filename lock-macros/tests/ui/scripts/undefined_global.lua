local n = tonumbr(ARGV[1])
return redis.call('INCRBY', KEYS[1], n)
