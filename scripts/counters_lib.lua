#!lua name=counters
-- Counters that expire, as a Redis Functions library (Redis 7 and later).

-- Adds args[1] to the counter keys[1], which expires after args[2] seconds.
local function bump(keys, args)
  local value = redis.call('INCRBY', keys[1], args[1])
  redis.call('EXPIRE', keys[1], args[2])
  return value
end

redis.register_function('bump', bump)

-- The sum of the counters; read-only, so it is called with FCALL_RO.
redis.register_function{
  function_name = 'total',
  callback = function(counters)
    local sum = 0
    for _, counter in ipairs(counters) do
      sum = sum + (tonumber(redis.call('GET', counter)) or 0)
    end
    return sum
  end,
  flags = {'no-writes'},
}
