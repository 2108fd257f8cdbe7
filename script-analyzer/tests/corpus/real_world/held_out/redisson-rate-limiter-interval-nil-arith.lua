-- Real-world bug fixture `redisson-rate-limiter-interval-nil-arith`: see manifest.toml beside this file.
local rate = redis.call('hget', KEYS[1], 'rate')
local interval = tonumber(redis.call('hget', KEYS[1], 'interval'))
local valueName = KEYS[2]
local permitsName = KEYS[4]
local currentValue = redis.call('get', valueName)
if currentValue ~= false then
  local expiredValues = redis.call('zrangebyscore', permitsName, 0, tonumber(ARGV[2]) - interval)
  local released = #expiredValues
  if released > 0 then
    redis.call('zremrangebyscore', permitsName, 0, tonumber(ARGV[2]) - interval)
    currentValue = tonumber(currentValue) + released
    redis.call('set', valueName, currentValue)
  end
  return currentValue
end
redis.call('set', valueName, rate)
return rate
