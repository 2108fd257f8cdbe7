-- Real-world bug fixture `aspnetcore-rate-limit-fractional-window-expireat`: see manifest.toml beside this file.
local limit = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local allowed = count < limit
if allowed then
  redis.call('ZADD', KEYS[1], now, ARGV[4])
end
redis.call('EXPIREAT', KEYS[1], now + window + 1)
return {allowed, count}
