-- Increment a counter that may hold a non-integer, reporting errors as
-- replies instead of aborting the script.
-- KEYS[1] counter, KEYS[2] audit list; ARGV[1] increment, ARGV[2] audit max
local result = redis.pcall('INCRBY', KEYS[1], ARGV[1])
if type(result) == 'table' and result.err then
    redis.log(redis.LOG_WARNING, 'counter ' .. KEYS[1] .. ': ' .. result.err)
    return redis.error_reply('counter is not an integer: ' .. result.err)
end

local entry = cjson.encode({key = KEYS[1], by = tonumber(ARGV[1]), value = result})
redis.call('LPUSH', KEYS[2], entry)
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[2]) - 1)

if result == 0 then
    return redis.status_reply('ZERO')
end
return result
