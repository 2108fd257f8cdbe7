#!lua name=counters
-- A Redis Functions library for the runtime's tests.

local function bump(keys, args)
  return redis.call('INCRBY', keys[1], args[1])
end

redis.register_function('bump', bump)

redis.register_function{
  function_name = 'peek',
  callback = function(keys) return redis.call('GET', keys[1]) end,
  flags = {'no-writes'},
}

redis.register_function('set_get', function(keys, args)
  redis.call('SET', keys[1], args[1])
  return redis.call('GET', keys[1])
end)

redis.register_function('hello', function() return 'hello' end)
