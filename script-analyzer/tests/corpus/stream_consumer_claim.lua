-- Stream consumer housekeeping: make sure the group exists, claim idle
-- messages for this consumer, read new ones, and acknowledge processed ids.
-- KEYS[1] stream, KEYS[2] dead-letter stream
-- ARGV[1] group, ARGV[2] consumer, ARGV[3] min idle ms, ARGV[4] count,
-- ARGV[5] max deliveries, ARGV[6..] ids to acknowledge
local ok = redis.pcall('XGROUP', 'CREATE', KEYS[1], ARGV[1], '$', 'MKSTREAM')
if type(ok) == 'table' and ok.err and not string.find(ok.err, 'BUSYGROUP', 1, true) then
    return redis.error_reply(ok.err)
end

local acked = 0
if #ARGV > 5 then
    acked = redis.call('XACK', KEYS[1], ARGV[1], unpack(ARGV, 6))
end

local claimed = redis.call('XAUTOCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3], '0-0', 'COUNT', ARGV[4])
local pending = redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', ARGV[4])
for _, entry in ipairs(pending) do
    if entry[4] > tonumber(ARGV[5]) then
        redis.call('XADD', KEYS[2], '*', 'id', entry[1], 'deliveries', entry[4])
        redis.call('XACK', KEYS[1], ARGV[1], entry[1])
    end
end

local fresh = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', ARGV[4], 'STREAMS', KEYS[1], '>')
return {acked, claimed[2], fresh}
