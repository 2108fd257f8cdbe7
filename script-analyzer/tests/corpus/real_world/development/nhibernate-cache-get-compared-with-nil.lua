-- Real-world bug fixture `nhibernate-cache-get-compared-with-nil`: see manifest.toml beside this file.
local result = redis.call('get', KEYS[1])
if result == nil then
  redis.call('srem', KEYS[2], ARGV[1])
end
return result
