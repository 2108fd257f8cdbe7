-- Releases one hold of a fair (FIFO) lock, or undoes an abandoned acquire
-- (which also takes its owner out of the queue). A release that frees the
-- lock wakes the head of the queue only, on its own channel; or, when the
-- head is a redlua waiter that takes a direct handoff, hands it the lock
-- (so that the head need not try again):
--   - the head leaves the queue and holds the lock, with a fencing token,
--     for the expiry it asked for (at most one wait time, so that a head
--     that died holds the lock up no longer than Redisson's fair lock would
--     keep the lock free for it; the new holder extends it at once);
--   - it is told on its channel with 'redlua:handoff:<token>:<try>', the
--     number of the try that offered to take it (a waiter trusts only the
--     answer to its latest try).
--
-- KEYS[1]  the lock (hash of owner -> hold count)
-- KEYS[2]  the prefix of the waiters' channels ('<prefix>:<owner>')
-- KEYS[3]  this release's latch: remembers the result for a retried release
-- KEYS[4]  the attempt key of the acquire that made the owner a holder
-- KEYS[5]  the attempt key of the hold released (KEYS[4] for the first hold,
--          the re-entry's own key for a re-entered one)
-- KEYS[6]  the queue: a list of waiting owners, head first
-- KEYS[7]  the waiters' deadlines: a sorted set of owner -> deadline (ms)
-- KEYS[8]  the fencing token counter (Redisson's RFencedLock layout)
-- KEYS[9]  the waiters that take a direct handoff: a hash of owner ->
--          '<expiry>:<try>' (see fair_acquire.lua; redlua's key)
-- KEYS[10..] latches of this client's earlier releases, which were answered:
--          deleted first (they only served retries of those releases), so
--          that they need no DEL of their own
-- ARGV[1]  the message that wakes a waiter
-- ARGV[2]  the lease, in milliseconds, for the holds that remain
-- ARGV[3]  the owner
-- ARGV[4]  how long the latch is kept, in milliseconds
-- ARGV[5]  'release' to release the hold, 'undo' to undo the acquire of
--          KEYS[5] if (and only if) it took effect, and leave the queue
-- ARGV[6]  how long an attempt key lives once it is closed, in milliseconds
-- ARGV[7]  '1' when KEYS[5] is a re-entry (it took effect iff it holds '1')
-- ARGV[8]  '1' to close the attempt keys (a late copy of an acquire may
--          still be on its way), '0' when no copy can be
-- ARGV[9]  the wait time of a waiter (Redisson's threadWaitTime), in ms
-- ARGV[10] how long the token counter lives, in milliseconds
-- ARGV[11] 'spublish' to announce on a sharded channel (Redis Cluster 7+),
--          'publish' otherwise
--
-- Returns 1 when the owner's last hold is gone (the head of the queue was
-- told, or handed the lock), 0
-- when the owner still holds it, -1 when the owner does not hold it, -2
-- (undo only) when the acquire never took effect: its key is closed so
-- that it never will. A release retried with the same latch returns the
-- first result.
-- A hold count that is not a number was not written by a lock: the key is
-- left alone (as any key that is not a lock of this kind).
if redis.call('type', KEYS[1])['ok'] == 'hash' then
  local count = redis.call('hget', KEYS[1], ARGV[3])
  if count and not string.match(count, '^%d+$') then
    return redis.error_reply('WRONGTYPE the hold count of the owner is not a number')
  end
end
if #KEYS >= 10 then
  redis.call('del', unpack(KEYS, 10))
end
local wait = tonumber(ARGV[9])
if not wait or wait < 1 or wait % 1 ~= 0 then
  return redis.error_reply('ERR redlua: invalid wait time ' .. ARGV[9])
end
local clock = redis.call('time')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

-- Drops the heads whose deadline passed (waiters that stopped asking), and
-- a head without one.
local dropped = false
while true do
  local head = redis.call('lindex', KEYS[6], 0)
  if not head then
    break
  end
  local deadline = redis.call('zscore', KEYS[7], head)
  if not deadline or tonumber(deadline) <= now then
    redis.call('zrem', KEYS[7], head)
    redis.call('hdel', KEYS[9], head)
    redis.call('lpop', KEYS[6])
    dropped = true
  else
    break
  end
end

-- The queue and the deadlines live as long as the latest deadline.
local function keep_queue()
  local last = redis.call('zrange', KEYS[7], -1, -1, 'withscores')
  if last[2] then
    local ttl = math.max(math.floor(tonumber(last[2]) - now), 0) + wait
    redis.call('pexpire', KEYS[6], ttl)
    redis.call('pexpire', KEYS[7], ttl)
    redis.call('pexpire', KEYS[9], ttl)
  end
end

local function announce(channel, message)
  if ARGV[11] == 'spublish' then
    redis.call('spublish', channel, message)
  else
    redis.call('publish', channel, message)
  end
end

-- The next fencing token: above every earlier one, and above the server's
-- clock in microseconds (as fair_acquire.lua mints them).
local function next_token()
  local token = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
  local last = redis.pcall('get', KEYS[8])
  if type(last) == 'string' and tonumber(last) and tonumber(last) >= token then
    token = tonumber(last) + 1
  end
  redis.call('set', KEYS[8], string.format('%.0f', token), 'px', ARGV[10])
  return token
end

-- Hands the free lock to `head`, which offered (with its try number `try`)
-- to take a direct handoff with an expiry of `expiry` ms: as if it had
-- acquired it (fair_acquire.lua).
local function hand_off(head, expiry, try)
  redis.call('lpop', KEYS[6])
  redis.call('zrem', KEYS[7], head)
  redis.call('hdel', KEYS[9], head)
  local waiting = redis.call('zrange', KEYS[7], 0, -1, 'withscores')
  local floor = now + tonumber(expiry) + wait
  for i = 1, #waiting, 2 do
    redis.call('zadd', KEYS[7], math.max(tonumber(waiting[i + 1]) - wait, floor), waiting[i])
  end
  local token = string.format('%.0f', next_token())
  redis.call('hset', KEYS[1], head, 1)
  redis.call('pexpire', KEYS[1], expiry)
  announce(KEYS[2] .. ':' .. head, 'redlua:handoff:' .. token .. ':' .. try)
end

-- Tells the head of the queue, if any, that the lock is free (every caller
-- has found it free); it has one wait to take it (a head that died is
-- dropped after that). A head that takes a direct handoff is handed the
-- lock instead.
local function wake_head()
  local head = redis.call('lindex', KEYS[6], 0)
  if head then
    local offer = redis.call('hget', KEYS[9], head)
    local expiry, try
    if offer then
      expiry, try = string.match(offer, '^([1-9]%d*):(%d+)$')
    end
    if expiry then
      hand_off(head, expiry, try)
      return
    end
    announce(KEYS[2] .. ':' .. head, ARGV[1])
    local deadline = redis.call('zscore', KEYS[7], head)
    if deadline and tonumber(deadline) > now + wait then
      redis.call('zadd', KEYS[7], now + wait, head)
    end
  end
end

-- Takes the owner out of the queue; those behind it move up by one wait.
-- Whether it was the head.
local function leave()
  local queue = redis.call('lrange', KEYS[6], 0, -1)
  local at
  for i = 1, #queue do
    if queue[i] == ARGV[3] then
      at = i
      break
    end
  end
  if at then
    for i = at + 1, #queue do
      redis.call('zincrby', KEYS[7], -wait, queue[i])
    end
    redis.call('lrem', KEYS[6], 0, ARGV[3])
  end
  redis.call('zrem', KEYS[7], ARGV[3])
  redis.call('hdel', KEYS[9], ARGV[3])
  return at == 1
end

local function is_free()
  return redis.call('exists', KEYS[1]) == 0
end

if ARGV[5] == 'undo' then
  local took
  if ARGV[7] == '1' then
    took = redis.call('get', KEYS[5]) == '1'
  else
    took = redis.call('type', KEYS[1])['ok'] == 'hash' and redis.call('hexists', KEYS[1], ARGV[3]) == 1
  end
  redis.call('set', KEYS[5], '0', 'px', ARGV[6])
  local was_head = false
  if ARGV[7] ~= '1' then
    was_head = leave()
  end
  if not took then
    if (was_head or dropped) and is_free() then
      wake_head()
    end
    keep_queue()
    return -2
  end
else
  -- A release retried with the same latch answers what the first did (a
  -- latch holds 0 or 1; anything else was not written by a release).
  local earlier = redis.call('get', KEYS[3])
  if earlier == '1' then
    return 1
  elseif earlier == '0' then
    return 0
  elseif earlier then
    return redis.error_reply('ERR redlua: invalid release latch ' .. earlier)
  end
  if redis.call('type', KEYS[1])['ok'] ~= 'hash' or redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
    if is_free() then
      -- Whoever is first may take it: pass the word on (a handoff moves
      -- the others' deadlines: the queue's expiry follows).
      wake_head()
      keep_queue()
    end
    return -1
  end
  if ARGV[7] == '1' then
    if ARGV[8] == '1' then
      redis.call('set', KEYS[5], '0', 'px', ARGV[6])
    else
      redis.call('del', KEYS[5])
    end
  end
end
local result
if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then
  if redis.call('pttl', KEYS[1]) < tonumber(ARGV[2]) then
    redis.call('pexpire', KEYS[1], ARGV[2])
  end
  result = 0
else
  redis.call('del', KEYS[1])
  wake_head()
  if ARGV[8] == '1' then
    redis.call('set', KEYS[4], '0', 'px', ARGV[6])
  end
  result = 1
end
if ARGV[5] ~= 'undo' then
  redis.call('set', KEYS[3], result, 'px', ARGV[4])
end
keep_queue()
return result
