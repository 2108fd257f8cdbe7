-- Real-world bug fixture `distributed-redis-tool-limit-expire-every-call`, corrected as its report corrects it: see manifest.toml beside this file.
local key = KEYS[1]
local limit = tonumber(ARGV[1])

local current = tonumber(redis.call('get', key) or "0")

if current + 1 > limit then
    return 0
else
    redis.call("INCRBY", key, 1)
    if current == 0 then
        redis.call("EXPIRE", key, 2)
    end
    return current + 1
end
