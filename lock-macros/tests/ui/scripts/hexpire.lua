-- Sets a time to live on one field of a hash (Redis 7.4 and later).
return redis.call('HEXPIRE', KEYS[1], ARGV[1], 'FIELDS', 1, ARGV[2])
