-- Returns the value of KEYS[1], or ARGV[1] when the key does not exist.
if redis.call('EXISTS', KEYS[1]) then
  return redis.call('GET', KEYS[1])
end
return ARGV[1]
