-- Real-world bug fixture `delayq-fetch-zincrby-absolute-score`, corrected as its report corrects it: see manifest.toml beside this file.
local queue = KEYS[1]
local due_by, next_score, batch = ARGV[1], ARGV[2], ARGV[3]

local ready
if batch then
    ready = redis.call('ZRANGE', queue, '-inf', due_by, 'BYSCORE', 'LIMIT', 0, batch)
else
    ready = redis.call('ZRANGE', queue, '-inf', due_by, 'BYSCORE')
end

for _, member in ipairs(ready) do
    redis.call('ZADD', queue, 'XX', next_score or 0.0, member)
end

return ready
