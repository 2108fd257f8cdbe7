-- Real-world bug fixture `redis-hget-field-passed-as-key`, corrected as its report corrects it: see manifest.toml beside this file.
redis.call('hget', KEYS[1], ARGV[1])
