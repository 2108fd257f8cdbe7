-- Real-world bug fixture `redis-cjson-empty-array-round-trip`: see manifest.toml beside this file.
local doc = cjson.decode(redis.call('GET', KEYS[1]))
doc.updated = ARGV[1]
redis.call('SET', KEYS[1], cjson.encode(doc))
return 1
