-- Real-world bug fixture `redisson-user-stock-tonumber-nil`: see manifest.toml beside this file.
if (redis.call('exists', KEYS[1]) == 1) then
  local stock_qty = tonumber(redis.call('get', KEYS[1]))
  local num = tonumber(ARGV[1])
  if (stock_qty + num >= 0) then
    return redis.call('incrby', KEYS[1], num)
  end
  return -1
end
return -2
