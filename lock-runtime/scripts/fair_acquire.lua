-- Acquires, or re-enters, a fair (FIFO) lock stored as Redisson's
-- RFairLock stores it: the lock hash of a reentrant lock, a queue of
-- waiters, and each waiter's deadline.
--
-- KEYS[1]  the lock: a hash of owner -> hold count, whose TTL is the lease
-- KEYS[2]  the fencing token counter (Redisson's RFencedLock layout)
-- KEYS[3]  this attempt's key: '0' once the attempt was abandoned (a late
--          copy of it must do nothing), '1' once a re-entry took effect
-- KEYS[4]  the queue: a list of waiting owners, head first
-- KEYS[5]  the waiters' deadlines: a sorted set of owner -> deadline (ms
--          since the epoch); a head whose deadline passed is dropped
-- KEYS[6]  the prefix of the waiters' channels ('<prefix>:<owner>')
-- KEYS[7]  the waiters that take a direct handoff (redlua's, not
--          Redisson's): a hash of owner -> '<expiry>:<try>', the expiry (ms)
--          that a release which hands them the lock gives it, and the
--          number of the waiter's try that offered it (fair_release.lua)
-- ARGV[1]  the lease, in milliseconds (an integer >= 1)
-- ARGV[2]  the owner, "<client-uuid>:<owner-id>"
-- ARGV[3]  '1' to re-enter a hold the owner has, '0' for a new holder
-- ARGV[4]  how long the attempt's key lives, in milliseconds
-- ARGV[5]  how long the token counter lives, in milliseconds
-- ARGV[6]  the wait time of a waiter (Redisson's threadWaitTime), in ms
-- ARGV[7]  '1' to join the queue when the lock cannot be had, '0' not to
-- ARGV[8]  the message that wakes a waiter
-- ARGV[9]  '<expiry>:<try>': the expiry (ms) a direct handoff to this owner
--          gives the lock, and the number of this try; '0' when the owner
--          takes no handoff (it waits as a Java waiter does)
-- ARGV[10] 'spublish' to announce on a sharded channel (Redis Cluster 7+),
--          'publish' otherwise
--
-- Returns {code, value}:
--   {1, token}  the owner now holds the lock (token 0 for a re-entry);
--   {0, wait}   not now: how long to wait at most before trying again, in
--               ms (-1: no bound); the owner is in the queue if ARGV[7]
--               is '1';
--   {2, 0}      re-entry refused: the owner holds nothing (any more);
--   {3, 0}      the attempt was abandoned before this copy of it ran.
-- A key that is not a reentrant lock is left alone: WRONGTYPE.
-- Deadlines follow Redisson's arithmetic (a new waiter: the one before it,
-- or the lease left, plus one wait; each acquire from the queue moves the
-- others up by one wait), with floors that keep a live waiter's place when
-- the lock changes hands faster than Redisson's arithmetic assumes: no
-- waiter's deadline is ever set before the lease it waits for ends plus
-- one wait, and a head woken for a free lock has one wait to take it.
local lease = tonumber(ARGV[1])
local wait = tonumber(ARGV[6])
if not lease or lease < 1 or lease % 1 ~= 0 then
  return redis.error_reply('ERR redlua: invalid lease ' .. ARGV[1])
end
if not wait or wait < 1 or wait % 1 ~= 0 then
  return redis.error_reply('ERR redlua: invalid wait time ' .. ARGV[6])
end
-- A hold count that is not a number was not written by a lock: the key is
-- left alone (as any key that is not a lock of this kind).
if redis.call('type', KEYS[1])['ok'] == 'hash' then
  local count = redis.call('hget', KEYS[1], ARGV[2])
  if count and not string.match(count, '^%d+$') then
    return redis.error_reply('WRONGTYPE the hold count of the owner is not a number')
  end
end
local offer = string.match(ARGV[9], '^[1-9]%d*:%d+$')
if ARGV[9] ~= '0' and not offer then
  return redis.error_reply('ERR redlua: invalid handoff offer ' .. ARGV[9])
end
local attempt = redis.call('get', KEYS[3])
if attempt == '0' then
  return {3, 0}
end
if attempt == '1' then
  return {1, 0}
end

local clock = redis.call('time')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

-- Drops the heads whose deadline passed (waiters that stopped asking), and
-- a head without one (it could never be dropped otherwise).
local dropped = false
while true do
  local head = redis.call('lindex', KEYS[4], 0)
  if not head then
    break
  end
  local deadline = redis.call('zscore', KEYS[5], head)
  if not deadline or tonumber(deadline) <= now then
    redis.call('zrem', KEYS[5], head)
    redis.call('hdel', KEYS[7], head)
    redis.call('lpop', KEYS[4])
    dropped = true
  else
    break
  end
end

-- The queue and the deadlines live as long as the latest deadline.
local function keep_queue()
  local last = redis.call('zrange', KEYS[5], -1, -1, 'withscores')
  if last[2] then
    local ttl = math.max(math.floor(tonumber(last[2]) - now), 0) + wait
    redis.call('pexpire', KEYS[4], ttl)
    redis.call('pexpire', KEYS[5], ttl)
    redis.call('pexpire', KEYS[7], ttl)
  end
end

-- The next fencing token: above every earlier one, and above the server's
-- clock in microseconds, so that it keeps growing after the counter expired.
local function next_token()
  local token = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
  local last = redis.pcall('get', KEYS[2])
  if type(last) == 'string' and tonumber(last) and tonumber(last) >= token then
    token = tonumber(last) + 1
  end
  redis.call('set', KEYS[2], string.format('%.0f', token), 'px', ARGV[5])
  return token
end

local kind = redis.call('type', KEYS[1])['ok']
if kind ~= 'none' then
  if kind ~= 'hash' then
    return redis.error_reply('WRONGTYPE the key holds a ' .. kind .. ', not a lock')
  end
  if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    if ARGV[3] == '1' then
      redis.call('hincrby', KEYS[1], ARGV[2], 1)
      redis.call('set', KEYS[3], '1', 'px', ARGV[4])
    end
    -- A re-entry; or an earlier copy of this same attempt took effect (its
    -- reply was lost), or a release handed the waiting owner the lock and
    -- the owner has not had the message: keep the lease at least `lease`
    -- from now.
    if redis.call('pttl', KEYS[1]) < lease then
      redis.call('pexpire', KEYS[1], ARGV[1])
    end
    if ARGV[3] == '1' then
      return {1, 0}
    end
    return {1, tonumber(redis.pcall('get', KEYS[2])) or 0}
  end
  -- A reentrant lock has exactly one field, "<uuid>:<thread-id>" -> count.
  local fields = redis.call('hlen', KEYS[1])
  local pair = fields == 1 and redis.call('hgetall', KEYS[1]) or {}
  if not (pair[1] and string.match(pair[1], ':%d+$') and string.match(pair[2], '^%d+$')) then
    return redis.error_reply('WRONGTYPE the key holds a hash that is not a reentrant lock')
  end
end
if ARGV[3] == '1' then
  return {2, 0}
end

local head = redis.call('lindex', KEYS[4], 0)
if kind == 'none' and (not head or head == ARGV[2]) then
  -- Free, and the owner is first in line (or nobody waits).
  if head then
    redis.call('lpop', KEYS[4])
  end
  redis.call('zrem', KEYS[5], ARGV[2])
  redis.call('hdel', KEYS[7], ARGV[2])
  -- Everyone behind moves up: their deadlines come closer by one wait,
  -- but none before this new lease ends plus one wait.
  local waiting = redis.call('zrange', KEYS[5], 0, -1, 'withscores')
  local floor = now + lease + wait
  for i = 1, #waiting, 2 do
    redis.call('zadd', KEYS[5], math.max(tonumber(waiting[i + 1]) - wait, floor), waiting[i])
  end
  keep_queue()
  local token = next_token()
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return {1, token}
end

-- Not now. A head that took the place of a dropped one is told, if the
-- lock is free for it.
if dropped and kind == 'none' and head then
  if ARGV[10] == 'spublish' then
    redis.call('spublish', KEYS[6] .. ':' .. head, ARGV[8])
  else
    redis.call('publish', KEYS[6] .. ':' .. head, ARGV[8])
  end
  local first = redis.call('zscore', KEYS[5], head)
  if first and tonumber(first) > now + wait then
    redis.call('zadd', KEYS[5], now + wait, head)
  end
end
local pttl = redis.call('pttl', KEYS[1])
local deadline = redis.call('zscore', KEYS[5], ARGV[2])
if deadline then
  -- Already waiting: a waiter that asks again is alive, so its deadline
  -- never ends before the lease it waits for, plus one wait.
  local alive = now + math.max(pttl, 0) + wait
  if tonumber(deadline) < alive then
    redis.call('zadd', KEYS[5], alive, ARGV[2])
  end
elseif ARGV[7] == '1' then
  -- Joins the queue at the end. Its deadline is the one before it (or the
  -- lease left, when first) plus one wait, as Redisson computes it.
  local last = redis.call('lindex', KEYS[4], -1)
  local before = last and last ~= ARGV[2] and redis.call('zscore', KEYS[5], last)
  local ttl
  if before then
    ttl = tonumber(before) - now
  else
    ttl = pttl
  end
  local timeout = math.max(ttl + wait + now, now + math.max(pttl, 0) + wait)
  if redis.call('zadd', KEYS[5], timeout, ARGV[2]) == 1 then
    redis.call('rpush', KEYS[4], ARGV[2])
  end
end
if deadline or ARGV[7] == '1' then
  -- A waiter says, with each try, whether a release may hand it the lock.
  if offer then
    redis.call('hset', KEYS[7], ARGV[2], offer)
  else
    redis.call('hdel', KEYS[7], ARGV[2])
  end
end
keep_queue()
if kind ~= 'none' then
  return {0, pttl}
end
-- Free, but another waiter is first: it has until its deadline.
local first = head and redis.call('zscore', KEYS[5], head)
if first then
  return {0, math.max(math.floor(tonumber(first) - now), 1)}
end
return {0, 1}
