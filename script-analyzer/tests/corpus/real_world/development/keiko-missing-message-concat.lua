-- Real-world bug fixture `keiko-missing-message-concat`: see manifest.toml beside this file.
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], 0, ARGV[1], 'LIMIT', 0, 10)
for _, id in ipairs(ids) do
  local message = redis.call('HGET', KEYS[2], id)
  redis.call('ECHO', 'moving ' .. id .. ': ' .. message)
  redis.call('ZADD', KEYS[3], ARGV[1], id)
  redis.call('ZREM', KEYS[1], id)
end
return #ids
