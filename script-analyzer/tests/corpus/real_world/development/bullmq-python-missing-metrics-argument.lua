-- Real-world bug fixture `bullmq-python-missing-metrics-argument`: see manifest.toml beside this file.
local rcall = redis.call
local maxDataPoints = tonumber(ARGV[5])
local timestamp = tonumber(ARGV[2])
local prevTS = rcall("HGET", KEYS[1], "prevTS")
rcall("HINCRBY", KEYS[1], "count", 1)
if not prevTS then
  rcall("HSET", KEYS[1], "prevTS", timestamp)
  return
end
rcall("LPUSH", KEYS[2], 1)
rcall("LTRIM", KEYS[2], 0, maxDataPoints - 1)
