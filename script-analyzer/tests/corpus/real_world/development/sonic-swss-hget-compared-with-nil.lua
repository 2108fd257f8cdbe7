-- Real-world bug fixture `sonic-swss-hget-compared-with-nil`: see manifest.toml beside this file.
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current == nil then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  return 1
end
return 0
