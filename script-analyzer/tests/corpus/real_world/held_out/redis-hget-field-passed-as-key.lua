-- Real-world bug fixture `redis-hget-field-passed-as-key`: see manifest.toml beside this file.
redis.call('hget', KEYS[1], KEYS[2])
