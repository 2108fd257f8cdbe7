-- Breaks a fair lock whoever holds it, tells the head of its queue, and
-- advances its fencing token (a resource then refuses the broken holder's
-- writes).
--
-- KEYS[1]  the lock
-- KEYS[2]  the prefix of the waiters' channels ('<prefix>:<owner>')
-- KEYS[3]  the fencing token counter
-- KEYS[4]  the queue: a list of waiting owners, head first
-- KEYS[5]  the waiters' deadlines: a sorted set of owner -> deadline (ms)
-- ARGV[1]  the message that wakes a waiter
-- ARGV[2]  how long the token counter lives, in milliseconds
-- ARGV[3]  the wait time of a waiter (Redisson's threadWaitTime), in ms
-- ARGV[4]  'spublish' to announce on a sharded channel (Redis Cluster 7+),
--          'publish' otherwise
--
-- Returns 1 when a lock was deleted, 0 when there was none. A key that is
-- not a reentrant lock is left alone: WRONGTYPE.
local kind = redis.call('type', KEYS[1])['ok']
if kind == 'none' then
  return 0
end
local pair = kind == 'hash' and redis.call('hlen', KEYS[1]) == 1 and redis.call('hgetall', KEYS[1]) or {}
if not (pair[1] and string.match(pair[1], ':%d+$') and string.match(pair[2], '^%d+$')) then
  return redis.error_reply('WRONGTYPE the key holds a ' .. kind .. ' that is not a reentrant lock')
end
local clock = redis.call('time')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
-- Drops the heads whose deadline passed, and a head without one.
while true do
  local head = redis.call('lindex', KEYS[4], 0)
  if not head then
    break
  end
  local deadline = redis.call('zscore', KEYS[5], head)
  if not deadline or tonumber(deadline) <= now then
    redis.call('zrem', KEYS[5], head)
    redis.call('lpop', KEYS[4])
  else
    break
  end
end
local token = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local last = redis.pcall('get', KEYS[3])
if type(last) == 'string' and tonumber(last) and tonumber(last) >= token then
  token = tonumber(last) + 1
end
redis.call('set', KEYS[3], string.format('%.0f', token), 'px', ARGV[2])
redis.call('del', KEYS[1])
local head = redis.call('lindex', KEYS[4], 0)
if head then
  if ARGV[4] == 'spublish' then
    redis.call('spublish', KEYS[2] .. ':' .. head, ARGV[1])
  else
    redis.call('publish', KEYS[2] .. ':' .. head, ARGV[1])
  end
  -- It has one wait to take the lock.
  local wait = tonumber(ARGV[3])
  local deadline = redis.call('zscore', KEYS[5], head)
  if wait and deadline and tonumber(deadline) > now + wait then
    redis.call('zadd', KEYS[5], now + wait, head)
  end
end
return 1
