-- Real-world bug fixture `redis-get-false-not-nil`: see manifest.toml beside this file.
local current = redis.call('GET', KEYS[1])
if current == nil then
  redis.call('SET', KEYS[1], ARGV[1])
  return ARGV[1]
end
return current
