-- Real-world bug fixture `redis-incr-beyond-2-pow-53`: see manifest.toml beside this file.
local id = redis.call('INCR', KEYS[1])
redis.call('HSET', KEYS[2], ARGV[1], id)
return id
