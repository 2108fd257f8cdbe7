-- Sliding-window rate limiter on a sorted set of request timestamps.
-- KEYS[1] window zset
-- ARGV[1] window ms, ARGV[2] limit, ARGV[3] now ms, ARGV[4] request id
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local now = tonumber(ARGV[3])

redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count >= limit then
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    local retry_after = 0
    if #oldest == 2 then
        retry_after = tonumber(oldest[2]) + window - now
    end
    return {0, count, retry_after}
end

redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('PEXPIRE', KEYS[1], window)
return {1, count + 1, 0}
