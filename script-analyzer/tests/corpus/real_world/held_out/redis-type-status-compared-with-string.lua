-- Real-world bug fixture `redis-type-status-compared-with-string`: see manifest.toml beside this file.
return redis.call('type', KEYS[1]) == 'string'
