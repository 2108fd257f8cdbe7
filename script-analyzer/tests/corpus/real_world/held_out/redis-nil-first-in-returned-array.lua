-- Real-world bug fixture `redis-nil-first-in-returned-array`: see manifest.toml beside this file.
local current = tonumber(redis.call('GET', KEYS[1]))
local ttl = redis.call('PTTL', KEYS[1])
return {current, ttl}
