local n = redis.call('INCR', KEYS[1])
if redis.call('SET', KEYS[2], ARGV[1]) == 'OK' then
  return n
end
return 0
