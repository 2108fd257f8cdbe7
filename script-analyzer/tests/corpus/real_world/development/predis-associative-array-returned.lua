-- Real-world bug fixture `predis-associative-array-returned`: see manifest.toml beside this file.
local hash = {}
if redis.call('exists', KEYS[1]) == 1 then
  hash['colour'] = redis.call('hget', KEYS[1], 'colour')
  hash['length'] = redis.call('hget', KEYS[1], 'length')
  hash['width'] = redis.call('hget', KEYS[1], 'width')
  return hash
end
return -1
