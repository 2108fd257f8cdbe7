#!lua name=ui_no_writes
redis.register_function{
  function_name = 'take',
  flags = {'no-writes'},
  callback = function(keys)
    return redis.call('GETDEL', keys[1])
  end,
}
