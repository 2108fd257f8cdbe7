-- Count an event once per request id, with a HyperLogLog of distinct users
-- and a bitmap of active days.
-- KEYS[1] seen-requests set, KEYS[2] counter, KEYS[3] users HLL, KEYS[4] days bitmap
-- ARGV[1] request id, ARGV[2] user id, ARGV[3] day number, ARGV[4] ttl seconds
if redis.call('SADD', KEYS[1], ARGV[1]) == 0 then
    return {redis.call('GET', KEYS[2]) or '0', 0}
end
redis.call('EXPIRE', KEYS[1], ARGV[4], 'NX')
local total = redis.call('INCR', KEYS[2])
redis.call('PFADD', KEYS[3], ARGV[2])
redis.call('SETBIT', KEYS[4], ARGV[3], 1)
local distinct = redis.call('PFCOUNT', KEYS[3])
local sha = redis.sha1hex(ARGV[1])
redis.setresp(2)
return {tostring(total), distinct, sha, redis.call('BITCOUNT', KEYS[4])}
