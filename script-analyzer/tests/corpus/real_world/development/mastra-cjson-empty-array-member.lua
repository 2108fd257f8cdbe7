-- Real-world bug fixture `mastra-cjson-empty-array-member`: see manifest.toml beside this file.
local snapshot = cjson.decode(redis.call('GET', KEYS[1]) or '{}')
if snapshot['steps'] == nil then
  snapshot['steps'] = cjson.empty_array
end
redis.call('SET', KEYS[1], cjson.encode(snapshot))
return 1
