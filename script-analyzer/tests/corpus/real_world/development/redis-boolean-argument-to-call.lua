-- Real-world bug fixture `redis-boolean-argument-to-call`: see manifest.toml beside this file.
local enabled = ARGV[2] == '1'
redis.call('HSET', KEYS[1], 'name', ARGV[1])
redis.call('HSET', KEYS[1], 'enabled', enabled)
return 1
