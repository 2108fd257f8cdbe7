-- Read lock acquire (Redisson RReadWriteLock layout).
-- KEYS[1] lock hash, KEYS[2] prefix of this owner's read timeout keys
--   ("{name}:<owner>:rwlock_timeout")
-- ARGV[1] lease ms, ARGV[2] owner, ARGV[3] owner's write field ("<owner>:write")
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
    redis.call('hset', KEYS[1], 'mode', 'read')
    redis.call('hset', KEYS[1], ARGV[2], 1)
    redis.call('set', KEYS[2] .. ':1', 1)
    redis.call('pexpire', KEYS[2] .. ':1', ARGV[1])
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end

if (mode == 'read') or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then
    local count = redis.call('hincrby', KEYS[1], ARGV[2], 1)
    local timeout_key = KEYS[2] .. ':' .. count
    redis.call('set', timeout_key, 1)
    redis.call('pexpire', timeout_key, ARGV[1])
    local remaining = redis.call('pttl', KEYS[1])
    redis.call('pexpire', KEYS[1], math.max(remaining, tonumber(ARGV[1])))
    return nil
end

return redis.call('pttl', KEYS[1])
