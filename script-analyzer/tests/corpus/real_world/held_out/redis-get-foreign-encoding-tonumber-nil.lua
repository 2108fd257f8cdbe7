-- Real-world bug fixture `redis-get-foreign-encoding-tonumber-nil`: see manifest.toml beside this file.
local limit = redis.call('GET', 'keyX')
return tonumber(limit) + 5
