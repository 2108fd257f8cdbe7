-- Real-world bug fixture `redisson-rate-limiter-empty-nearest`: see manifest.toml beside this file.
local interval = tonumber(ARGV[4])
local currentValue = redis.call('get', KEYS[2])
if tonumber(currentValue) < tonumber(ARGV[1]) then
  local nearest = redis.call('zrangebyscore', KEYS[3], '(' .. (tonumber(ARGV[2]) - interval), tonumber(ARGV[2]), 'withscores', 'limit', 0, 1)
  local random, permits = struct.unpack('fI', nearest[1])
  return tonumber(nearest[2]) - (tonumber(ARGV[2]) - interval)
else
  redis.call('zadd', KEYS[3], ARGV[2], struct.pack('fI', ARGV[3], ARGV[1]))
  redis.call('decrby', KEYS[2], ARGV[1])
  return nil
end
