local t = redis.call('time')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('zremrangebyscore', KEYS[1], '-inf', now - tonumber(ARGV[1]))
if redis.call('zscore', KEYS[1], ARGV[3]) == false and
        redis.call('zcard', KEYS[1]) >= tonumber(ARGV[2]) then
    return 0
end
redis.call('zadd', KEYS[1], now, ARGV[3])
return 1
