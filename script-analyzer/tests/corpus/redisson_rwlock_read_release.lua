-- Read lock release: drop one read hold and recompute the hash's TTL from
-- the readers' timeout keys, clearing readers whose keys expired.
-- KEYS[1] lock hash, KEYS[2] channel, KEYS[3] this owner's timeout key prefix,
-- KEYS[4] the "{name}" prefix shared by every reader's timeout keys
-- ARGV[1] unlock message, ARGV[2] owner
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
    redis.call('publish', KEYS[2], ARGV[1])
    return 1
end

if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
    return nil
end

local counter = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if counter == 0 then
    redis.call('hdel', KEYS[1], ARGV[2])
end
redis.call('del', KEYS[3] .. ':' .. (counter + 1))

if redis.call('hlen', KEYS[1]) > 1 then
    local max_remaining = -3
    local fields = redis.call('hkeys', KEYS[1])
    for _, field in ipairs(fields) do
        local holds = tonumber(redis.call('hget', KEYS[1], field))
        if type(holds) == 'number' then
            for i = holds, 1, -1 do
                local remaining = redis.call('pttl', KEYS[4] .. ':' .. field .. ':rwlock_timeout:' .. i)
                max_remaining = math.max(remaining, max_remaining)
            end
        end
    end

    if max_remaining > 0 then
        redis.call('pexpire', KEYS[1], max_remaining)
        return 0
    end

    if mode == 'write' then
        return 0
    end
end

redis.call('del', KEYS[1])
redis.call('publish', KEYS[2], ARGV[1])
return 1
