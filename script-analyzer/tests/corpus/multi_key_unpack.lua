-- Copy many values at once: read every source key, write them under the
-- destination keys, then delete the sources.
-- KEYS[1..n] sources, KEYS[n+1..2n] destinations; ARGV[1] ttl seconds
local n = #KEYS / 2
local sources = {}
for i = 1, n do
    sources[i] = KEYS[i]
end
local values = redis.call('MGET', unpack(sources))
local moved = 0
for i = 1, n do
    if values[i] then
        redis.call('SET', KEYS[n + i], values[i], 'EX', ARGV[1])
        moved = moved + 1
    end
end
redis.call('DEL', unpack(sources))
return moved
