#!lua name=counters
-- The library of `#[redis_function]`'s documentation (its examples are
-- doctests).
redis.register_function('bump', function(keys, args)
  return redis.call('INCRBY', keys[1], args[1])
end)
redis.register_function{function_name = 'peek', flags = {'no-writes'},
  callback = function(keys) return redis.call('GET', keys[1]) end}
