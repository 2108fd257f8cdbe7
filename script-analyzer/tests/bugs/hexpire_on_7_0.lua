-- Bug: HEXPIRE on Redis 7.0. Hash field expiration arrived in Redis 7.4: on
-- an older server the command is unknown and the script fails.
-- Reported: class of bug (a script written against a newer server than
-- the one deployed).
-- declared: keys=1 args=2
-- expect: target_version 7
return redis.call('HEXPIRE', KEYS[1], ARGV[1], 'FIELDS', 1, ARGV[2])
