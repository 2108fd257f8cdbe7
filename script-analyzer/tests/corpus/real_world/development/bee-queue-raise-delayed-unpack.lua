-- Real-world bug fixture `bee-queue-raise-delayed-unpack`: see manifest.toml beside this file.
local now = tonumber(ARGV[1])
local raising = redis.call("zrangebyscore", KEYS[1], 0, ARGV[1])
local numRaising = #raising
if numRaising > 0 then
  redis.call("lpush", KEYS[2], unpack(raising))
  redis.call("zremrangebyscore", KEYS[1], 0, ARGV[1])
end
return numRaising
