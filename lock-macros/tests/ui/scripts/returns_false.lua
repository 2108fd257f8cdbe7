if redis.call('SET', KEYS[1], ARGV[1], 'NX') then
  return 1
end
return false
