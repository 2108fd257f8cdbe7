#!lua name=ui_load_time
local prefix = redis.call('GET', 'config:prefix') or ''

redis.register_function('get', function(keys)
  return redis.call('GET', prefix .. keys[1])
end)
