-- Takes a waiter that stopped waiting (cancelled, timed out, failed) out of
-- a fair lock's queue, as Redisson's RFairLock does when an acquire fails:
-- the waiters behind it move up by one wait. If it was first in line and
-- the lock is free, the new head is told, so that a wake-up it got and did
-- not use is passed on. A lock a release handed the owner (a direct
-- handoff, see fair_release.lua) that it never took is given up the same
-- way: the owner only leaves when its acquire ends without the lock.
--
-- KEYS[1]  the lock (hash of owner -> hold count)
-- KEYS[2]  the prefix of the waiters' channels ('<prefix>:<owner>')
-- KEYS[3]  the queue: a list of waiting owners, head first
-- KEYS[4]  the waiters' deadlines: a sorted set of owner -> deadline (ms)
-- KEYS[5]  the waiters that take a direct handoff (a hash of owner ->
--          '<expiry>:<try>', see fair_acquire.lua)
-- ARGV[1]  the owner that leaves
-- ARGV[2]  the wait time of a waiter (Redisson's threadWaitTime), in ms
-- ARGV[3]  the message that wakes a waiter
-- ARGV[4]  'spublish' to announce on a sharded channel (Redis Cluster 7+),
--          'publish' otherwise
--
-- Returns 1 when the owner was in the queue (or handed the lock), 0 when
-- it was not.
local wait = tonumber(ARGV[2])
if not wait or wait < 1 or wait % 1 ~= 0 then
  return redis.error_reply('ERR redlua: invalid wait time ' .. ARGV[2])
end
local clock = redis.call('time')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

-- Drops the heads whose deadline passed, and a head without one.
local dropped = false
while true do
  local head = redis.call('lindex', KEYS[3], 0)
  if not head then
    break
  end
  local deadline = redis.call('zscore', KEYS[4], head)
  if not deadline or tonumber(deadline) <= now then
    redis.call('zrem', KEYS[4], head)
    redis.call('hdel', KEYS[5], head)
    redis.call('lpop', KEYS[3])
    dropped = true
  else
    break
  end
end

local queue = redis.call('lrange', KEYS[3], 0, -1)
local at
for i = 1, #queue do
  if queue[i] == ARGV[1] then
    at = i
    break
  end
end
if at then
  for i = at + 1, #queue do
    redis.call('zincrby', KEYS[4], -wait, queue[i])
  end
  redis.call('lrem', KEYS[3], 0, ARGV[1])
end
local removed = redis.call('zrem', KEYS[4], ARGV[1])
redis.call('hdel', KEYS[5], ARGV[1])
local handed = redis.call('type', KEYS[1])['ok'] == 'hash' and redis.call('hdel', KEYS[1], ARGV[1]) == 1

if (at == 1 or dropped or handed) and redis.call('exists', KEYS[1]) == 0 then
  local head = redis.call('lindex', KEYS[3], 0)
  if head then
    if ARGV[4] == 'spublish' then
      redis.call('spublish', KEYS[2] .. ':' .. head, ARGV[3])
    else
      redis.call('publish', KEYS[2] .. ':' .. head, ARGV[3])
    end
    -- It has one wait to take the lock.
    local deadline = redis.call('zscore', KEYS[4], head)
    if deadline and tonumber(deadline) > now + wait then
      redis.call('zadd', KEYS[4], now + wait, head)
    end
  end
end

local last = redis.call('zrange', KEYS[4], -1, -1, 'withscores')
if last[2] then
  local ttl = math.max(math.floor(tonumber(last[2]) - now), 0) + wait
  redis.call('pexpire', KEYS[3], ttl)
  redis.call('pexpire', KEYS[4], ttl)
  redis.call('pexpire', KEYS[5], ttl)
end
if at or removed == 1 or handed then
  return 1
end
return 0
