-- Real-world bug fixture `redis-cache-time-concatenated`: see manifest.toml beside this file.
local time = redis.call('TIME')
local now = tonumber(time[1] .. '.' .. time[2])
redis.call('ZADD', KEYS[1], now, ARGV[1])
local count = redis.call('ZCARD', KEYS[1])
if count > tonumber(ARGV[2]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, count - tonumber(ARGV[2]) - 1)
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, count - tonumber(ARGV[2]) - 1)
  redis.call('HDEL', KEYS[2], unpack(oldest))
end
return 1
