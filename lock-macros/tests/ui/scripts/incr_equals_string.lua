local n = redis.call('INCR', KEYS[1])
if n == ARGV[1] then
  redis.call('EXPIRE', KEYS[1], 60)
end
return n
