-- Gives leased permits back to a semaphore stored as Redisson's
-- RPermitExpirableSemaphore stores it, and brings back expired ones. Each
-- permit comes back exactly once: only a permit still in the set of those
-- taken is counted back, and it leaves the set in the same step. A retry
-- changes nothing more, and returns the first one's result (its request
-- latch keeps it), so that a release whose reply was lost is not taken for
-- a release of permits already gone.
--
-- KEYS[1]  the semaphore (permits available)
-- KEYS[2]  the permits taken: id -> expiry in ms
-- KEYS[3]  the channel: the permits available, after
-- KEYS[4]  this request's latch: its result, once it ran (written only
--          when ids are given)
-- ARGV[1]  how long the latch lives, in milliseconds
-- ARGV[2]  PUBLISH or SPUBLISH
-- ARGV[3..] the ids of the permits to give back (none: only bring back
--          expired ones)
--
-- Returns {released, expired}: how many of the ids were still taken and
-- came back, and how many of those had expired (nobody had brought them
-- back yet).
local done = redis.call('get', KEYS[4])
if done then
  local released, expired = string.match(done, '^(%d+):(%d+)$')
  return {tonumber(released) or 0, tonumber(expired) or 0}
end
local kind = redis.call('type', KEYS[1])['ok']
if kind ~= 'none' and kind ~= 'string' then
  return redis.error_reply('WRONGTYPE the key holds a ' .. kind .. ', not a semaphore')
end
local taken_kind = redis.call('type', KEYS[2])['ok']
if taken_kind ~= 'none' and taken_kind ~= 'zset' then
  return redis.error_reply('WRONGTYPE the permits taken are a ' .. taken_kind .. ', not a sorted set')
end
local value = redis.call('get', KEYS[1])
if value and not string.match(value, '^-?%d+$') then
  return redis.error_reply('WRONGTYPE the key holds a string that is not a number of permits')
end
local now = redis.call('time')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local released = 0
local expired = 0
for i = 3, #ARGV do
  local expiry = redis.call('zscore', KEYS[2], ARGV[i])
  if expiry then
    redis.call('zrem', KEYS[2], ARGV[i])
    released = released + 1
    if (tonumber(expiry) or 0) <= now_ms then
      expired = expired + 1
    end
  end
end
local others = redis.call('zrangebyscore', KEYS[2], '-inf', now_ms, 'limit', 0, 1000)
if #others > 0 then
  redis.call('zrem', KEYS[2], unpack(others))
end
local back = released + #others
if back > 0 then
  local available = redis.call('incrby', KEYS[1], back)
  if available > 0 then
    redis.call(ARGV[2], KEYS[3], available)
  end
end
if #ARGV > 2 then
  redis.call('set', KEYS[4], released .. ':' .. expired, 'px', ARGV[1])
end
return {released, expired}
