-- Merge daily leaderboards into a weekly one and return the top entries.
-- KEYS[1] weekly zset (destination), KEYS[2..8] daily zsets
-- ARGV[1] how many entries to return, ARGV[2] ttl seconds
local days = #KEYS - 1
local sources = {}
for i = 2, #KEYS do
    table.insert(sources, KEYS[i])
end
redis.call('ZUNIONSTORE', KEYS[1], days, unpack(sources))
redis.call('EXPIRE', KEYS[1], ARGV[2])
local top = redis.call('ZREVRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1, 'WITHSCORES')
local out = {}
for i = 1, #top, 2 do
    out[#out + 1] = string.format('%s:%d', top[i], tonumber(top[i + 1]))
end
return out
