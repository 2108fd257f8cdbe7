-- Real-world bug fixture `openslides-changed-elements-unpack`: see manifest.toml beside this file.
local change_id = redis.call('zrevrangebyscore', KEYS[1], '+inf', '-inf', 'WITHSCORES', 'LIMIT', 0, 1)
local next_id = 1
if change_id[2] then
  next_id = tonumber(change_id[2]) + 1
end
local args = {}
for _, element in ipairs(ARGV) do
  table.insert(args, next_id)
  table.insert(args, element)
end
redis.call('zadd', KEYS[1], unpack(args))
return next_id
