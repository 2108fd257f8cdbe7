-- Real-world bug fixture `redisson-map-cache-len-of-missing`: see manifest.toml beside this file.
local insertable = false
local value = redis.call('hget', KEYS[1], ARGV[5])
if value == false then
  insertable = true
end
local size = string.len(value)
if insertable then
  redis.call('hset', KEYS[1], ARGV[5], ARGV[6])
end
return size
