-- Real-world bug fixture `redisson-fair-lock-zscore-nil-compare`: see manifest.toml beside this file.
while true do
  local firstThreadId2 = redis.call('lindex', KEYS[2], 0)
  if firstThreadId2 == false then
    break
  end
  local timeout = tonumber(redis.call('zscore', KEYS[3], firstThreadId2))
  if timeout <= tonumber(ARGV[4]) then
    redis.call('zrem', KEYS[3], firstThreadId2)
    redis.call('lpop', KEYS[2])
  else
    break
  end
end
return nil
