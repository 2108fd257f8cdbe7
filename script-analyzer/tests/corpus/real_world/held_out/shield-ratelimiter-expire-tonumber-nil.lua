-- Real-world bug fixture `shield-ratelimiter-expire-tonumber-nil`: see manifest.toml beside this file.
local key = KEYS[1]

local count = redis.call('incr', key)
local ttl = redis.call('ttl', key)

local expire = ARGV[1]
local times = ARGV[2]

if count == 1 then
    redis.call('expire', key, tonumber(expire))
else
    if ttl == -1 then
        redis.call('expire', key, tonumber(expire))
    end
end

if count > tonumber(times) then
    return 0
end

return 1
