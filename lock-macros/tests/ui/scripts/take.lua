-- Takes a permit of KEYS[1]: {1, token, left} when taken, {0, ttl, left}
-- when none is left.
local left = tonumber(redis.call('get', KEYS[1]) or '0') or 0
if left < 1 then
  return {0, redis.call('pttl', KEYS[1]), left}
end
return {1, redis.call('incr', KEYS[2]), redis.call('decr', KEYS[1])}
