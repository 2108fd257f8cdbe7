#!lua name=warned
-- `bump` adds to a value that may be missing (GET answers `false`).

redis.register_function('bump', function(keys, args)
  return redis.call('GET', keys[1]) + args[1]
end)
