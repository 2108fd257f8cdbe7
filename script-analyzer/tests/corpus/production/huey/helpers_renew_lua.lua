local t = redis.call('time')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
if redis.call('zscore', KEYS[1], ARGV[1]) == false then
    return 0
end
redis.call('zadd', KEYS[1], now, ARGV[1])
return 1
