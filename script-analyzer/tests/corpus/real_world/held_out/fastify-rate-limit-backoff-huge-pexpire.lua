-- Real-world bug fixture `fastify-rate-limit-backoff-huge-pexpire`: see manifest.toml beside this file.
local key = KEYS[1]
local timeWindow = tonumber(ARGV[1])
local max = tonumber(ARGV[2])
local MAX_SAFE_INTEGER = 9007199254740991
local current = redis.call('INCR', key)
local ttl = redis.call('PTTL', key)
if ttl == -1 then
  redis.call('PEXPIRE', key, timeWindow)
  ttl = timeWindow
elseif current > max then
  local backoffExponent = current - max - 1
  ttl = math.min(timeWindow * (2 ^ backoffExponent), MAX_SAFE_INTEGER)
  redis.call('PEXPIRE', key, ttl)
end
return {current, ttl}
