
local key = KEYS[1]
-- Microseconds throughout, mirroring GCRA.step: integers stay exact in a Lua
-- double up to 2**53, which epoch-us (~1.7e15) sits comfortably below.
local now_us = tonumber(ARGV[1]) * 1000
local weight = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
local n = tonumber(ARGV[4])

local fields = {}
for i = 1, n do
    fields[i] = 'tat' .. i
end

local stored = redis.call('HMGET', key, unpack(fields))
local advanced = {}

for i = 1, n do
    local offset = (i - 1) * 2
    local emission = tonumber(ARGV[5 + offset])
    local burst = tonumber(ARGV[5 + offset + 1])

    if weight > burst then
        return {i - 1, -1}
    end

    local tat = now_us
    if stored[i] then
        local parsed = tonumber(stored[i])
        if parsed and parsed > now_us then
            tat = parsed
        end
    end

    local new_tat = tat + weight * emission
    local allow_at = new_tat - burst * emission

    if allow_at > now_us then
        return {i - 1, math.ceil((allow_at - now_us) / 1000)}
    end

    advanced[i] = new_tat
end

-- Reached only when every rate admits, so the write is all-or-nothing.
local write = {}
for i = 1, n do
    write[#write + 1] = 'tat' .. i
    -- %.0f, not tostring: Lua's default number formatting is 14 significant
    -- digits, which would mangle an integer this large.
    write[#write + 1] = string.format('%.0f', advanced[i])
end

redis.call('HSET', key, unpack(write))
redis.call('PEXPIRE', key, ttl)
return {-1, 0}
