-- Expires the field ARGV[2] of the hash KEYS[1] after ARGV[1] seconds.
-- HEXPIRE came with Redis 7.4: the README's example checks this script
-- against the target redis-7.4, and so does `lockctl lint`, from the
-- header below.
-- redlua: keys=1 args=2 target=redis-7.4
return redis.call('HEXPIRE', KEYS[1], ARGV[1], 'FIELDS', 1, ARGV[2])
