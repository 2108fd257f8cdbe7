#!lua name=field_ttl
-- HEXPIRE needs Redis 7.4: refused on the default target, accepted with
-- `target = "redis-7.4"`.

redis.register_function('expire_field', function(keys, args)
  return redis.call('HEXPIRE', keys[1], args[1], 'FIELDS', 1, args[2])
end)
