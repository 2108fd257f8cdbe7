-- Real-world bug fixture `redis-cjson-scientific-notation`: see manifest.toml beside this file.
local doc = cjson.decode(redis.call('GET', KEYS[1]))
doc['seen'] = (doc['seen'] or 0) + 1
local text = cjson.encode(doc)
redis.call('SET', KEYS[1], text)
return text
