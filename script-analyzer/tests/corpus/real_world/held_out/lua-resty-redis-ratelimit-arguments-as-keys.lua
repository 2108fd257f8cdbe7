-- Real-world bug fixture `lua-resty-redis-ratelimit-arguments-as-keys`: see manifest.toml beside this file.
local key = KEYS[1]
local rate, burst = tonumber(KEYS[2]), tonumber(KEYS[3])
local now, duration = tonumber(KEYS[4]), tonumber(KEYS[5])

local excess, last, forbidden = 0, 0, 0

local res = redis.pcall('GET', key)
if type(res) == "table" and res.err then
    return {err=res.err}
end

if res and type(res) == "string" then
    local v = cjson.decode(res)
    if v and #v > 2 then
        excess, last, forbidden = v[1], v[2], v[3]
    end

    if forbidden == 1 then
        return {3, excess}
    end

    local ms = math.abs(now - last)
    excess = excess - rate * ms / 1000 + 1000

    if excess < 0 then
        excess = 0
    end

    if excess > burst then
        if duration > 0 then
            redis.pcall('SET', key, cjson.encode({excess, now, 1}))
            redis.pcall('EXPIRE', key, duration)
        end

        return {2, excess}
    end
end

redis.pcall('SET', key, cjson.encode({excess, now, 0}))
redis.pcall('EXPIRE', key, 60)

return {1, excess}
