-- Token bucket rate limiter.
-- KEYS[1] bucket hash
-- ARGV[1] capacity, ARGV[2] refill per second, ARGV[3] tokens wanted
-- Returns {allowed (0/1), tokens left, ms until one more token}.
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local wanted = tonumber(ARGV[3])
if not capacity or not rate or not wanted or rate <= 0 then
    return redis.error_reply('ERR invalid rate limiter arguments')
end

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)

local state = redis.call('HMGET', KEYS[1], 'tokens', 'updated')
local tokens = tonumber(state[1]) or capacity
local updated = tonumber(state[2]) or now_ms

local elapsed = math.max(0, now_ms - updated)
tokens = math.min(capacity, tokens + elapsed * rate / 1000)

local allowed = 0
if tokens >= wanted then
    tokens = tokens - wanted
    allowed = 1
end

redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'updated', now_ms)
local ttl = math.ceil(capacity / rate * 1000)
redis.call('PEXPIRE', KEYS[1], ttl)

local wait = 0
if tokens < 1 then
    wait = math.ceil((1 - tokens) / rate * 1000)
end
return {allowed, math.floor(tokens), wait}
