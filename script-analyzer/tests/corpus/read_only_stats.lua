#!lua flags=no-writes
-- Read-only queue statistics (safe for EVALSHA_RO and replicas).
-- KEYS[1] wait list, KEYS[2] active list, KEYS[3] delayed zset,
-- KEYS[4] events stream, KEYS[5] stats hash
local stats = {}
stats[1] = redis.call('LLEN', KEYS[1])
stats[2] = redis.call('LLEN', KEYS[2])
stats[3] = redis.call('ZCOUNT', KEYS[3], '-inf', '+inf')
stats[4] = redis.call('XLEN', KEYS[4])
local encoding = redis.call('OBJECT', 'ENCODING', KEYS[5])
stats[5] = encoding
local counters = redis.call('HGETALL', KEYS[5])
for i = 1, #counters, 2 do
    table.insert(stats, counters[i] .. '=' .. counters[i + 1])
end
local last = redis.call('XREVRANGE', KEYS[4], '+', '-', 'COUNT', 1)
if #last > 0 then
    table.insert(stats, last[1][1])
end
return stats
