#!lua name=ui_lib
-- A Redis Functions library for the ui tests.

local function get(keys)
  return redis.call('GET', keys[1])
end

redis.register_function{function_name = 'get', callback = get, flags = {'no-writes'}}

redis.register_function('set', function(keys, args)
  return redis.call('SET', keys[1], args[1])
end)
