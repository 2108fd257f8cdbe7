-- Renews leased permits of a semaphore stored as Redisson's
-- RPermitExpirableSemaphore stores it: each id still taken and not expired
-- gets a new expiry, `lease` from now. Expired permits (these ids' too)
-- come back to the pool first, each once.
--
-- KEYS[1]  the semaphore (permits available)
-- KEYS[2]  the permits taken: id -> expiry in ms
-- KEYS[3]  the channel: the permits available, when expired ones came back
-- ARGV[1]  the lease, in milliseconds (an integer >= 1)
-- ARGV[2]  PUBLISH or SPUBLISH
-- ARGV[3..] the ids to renew
--
-- Returns one flag per id, in order: 1 renewed, 0 gone (expired, released
-- or taken away).
local lease = tonumber(ARGV[1])
if not lease or lease < 1 or lease % 1 ~= 0 then
  return redis.error_reply('ERR redlua: invalid lease ' .. ARGV[1])
end
local taken_kind = redis.call('type', KEYS[2])['ok']
if taken_kind ~= 'none' and taken_kind ~= 'zset' then
  return redis.error_reply('WRONGTYPE the permits taken are a ' .. taken_kind .. ', not a sorted set')
end
local now = redis.call('time')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local expired = redis.call('zrangebyscore', KEYS[2], '-inf', now_ms, 'limit', 0, 1000)
if #expired > 0 then
  local kind = redis.call('type', KEYS[1])['ok']
  if kind ~= 'none' and kind ~= 'string' then
    return redis.error_reply('WRONGTYPE the key holds a ' .. kind .. ', not a semaphore')
  end
  redis.call('zrem', KEYS[2], unpack(expired))
  local available = redis.call('incrby', KEYS[1], #expired)
  if available > 0 then
    redis.call(ARGV[2], KEYS[3], available)
  end
end
local renewed = {}
for i = 3, #ARGV do
  if redis.call('zscore', KEYS[2], ARGV[i]) then
    redis.call('zadd', KEYS[2], 'xx', now_ms + lease, ARGV[i])
    renewed[#renewed + 1] = 1
  else
    renewed[#renewed + 1] = 0
  end
end
return renewed
