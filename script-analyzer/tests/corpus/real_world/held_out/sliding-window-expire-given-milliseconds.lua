-- Real-world bug fixture `sliding-window-expire-given-milliseconds`: see manifest.toml beside this file.
local key = KEYS[1]
local interval = tonumber(ARGV[1]) or 0 -- milliseconds
local limit = tonumber(ARGV[2]) or 0
local ts = tonumber(ARGV[3])
redis.call("ZREMRANGEBYSCORE", key, 0, ts - interval)
local usage = redis.call("ZCARD", key)
if usage < limit then
  redis.call("ZADD", key, ts, ts)
end
redis.call("EXPIRE", key, interval)
return usage
