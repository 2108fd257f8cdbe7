-- Real-world bug fixture `redisson-json-set-keep-ttl-missing-space`: see manifest.toml beside this file.
local ttl = redis.call('pttl', KEYS[1])
redis.call('json.set', KEYS[1], '$', ARGV[1])
if ttl > 0 thenredis.call('pexpire', KEYS[1], ttl)
end
