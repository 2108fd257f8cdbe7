-- Real-world bug fixture `dramatiq-maintenance-requeue-unpack`: see manifest.toml beside this file.
local dead = redis.call('ZRANGEBYSCORE', KEYS[1], 0, tonumber(ARGV[1]) - tonumber(ARGV[2]))
for i = 1, #dead do
  local acks = KEYS[2] .. '.' .. dead[i]
  local ids = redis.call('SMEMBERS', acks)
  if next(ids) then
    redis.call('RPUSH', KEYS[3], unpack(ids))
    redis.call('DEL', acks)
  end
  redis.call('ZREM', KEYS[1], dead[i])
end
return 1
