-- Real-world bug fixture `delayqueue-retry-count-nil-compare`: see manifest.toml beside this file.
local msgs = redis.call('ZRangeByScore', KEYS[1], '0', ARGV[1], 'LIMIT', 0, 100)
if #msgs == 0 then return 0 end
local retryCounts = redis.call('HMGet', KEYS[2], unpack(msgs))
for i, v in ipairs(retryCounts) do
  local k = msgs[i]
  if tonumber(v) > 0 then
    redis.call('HIncrBy', KEYS[2], k, -1)
    redis.call('LPush', KEYS[3], k)
  else
    redis.call('HDel', KEYS[2], k)
    redis.call('SAdd', KEYS[4], k)
  end
end
redis.call('ZRem', KEYS[1], unpack(msgs))
return #msgs
