-- Releases one hold of a reentrant lock, or undoes an abandoned acquire.
--
-- KEYS[1]  the lock (hash of owner -> hold count)
-- KEYS[2]  the channel its waiters listen on
-- KEYS[3]  this release's latch: remembers the result for a retried release
-- KEYS[4]  the attempt key of the acquire that made the owner a holder
-- KEYS[5]  the attempt key of the hold released (KEYS[4] for the first hold,
--          the re-entry's own key for a re-entered one)
-- KEYS[6..] latches of this client's earlier releases, which were answered:
--          deleted first (they only served retries of those releases), so
--          that they need no DEL of their own
-- ARGV[1]  the message that wakes a waiter
-- ARGV[2]  the lease, in milliseconds, for the holds that remain
-- ARGV[3]  the owner
-- ARGV[4]  how long the latch is kept, in milliseconds
-- ARGV[5]  'release' to release the hold, 'undo' to undo the acquire of
--          KEYS[5] if (and only if) it took effect
-- ARGV[6]  how long an attempt key lives once it is closed, in milliseconds
-- ARGV[7]  '1' when KEYS[5] is a re-entry (it took effect iff it holds '1')
-- ARGV[8]  '1' to close the attempt keys (a late copy of an acquire may
--          still be on its way), '0' when no copy can be
-- ARGV[9]  'spublish' to announce on a sharded channel (Redis Cluster 7+),
--          'publish' otherwise
--
-- Returns 1 when the lock is now free (waiters were told), 0 when the owner
-- still holds it, -1 when the owner does not hold it, -2 (undo only) when
-- the acquire never took effect: its key is closed so that it never will.
-- A release retried with the same latch returns the first result.
if #KEYS >= 6 then
  redis.call('del', unpack(KEYS, 6))
end
-- The owner's hold count, or false when it holds nothing (or the key is
-- not a hash).
local function held()
  return redis.call('type', KEYS[1])['ok'] == 'hash' and redis.call('hget', KEYS[1], ARGV[3])
end
-- A hold count that is not a number was not written by a lock: the key is
-- left alone (as any key that is not a lock of this kind).
local function not_a_count(count)
  return count and not string.match(count, '^%d+$')
end
local not_a_lock = 'WRONGTYPE the hold count of the owner is not a number'
if ARGV[5] == 'undo' then
  local took
  if ARGV[7] == '1' then
    took = redis.call('get', KEYS[5]) == '1'
    if took and not_a_count(held()) then
      return redis.error_reply(not_a_lock)
    end
  else
    local count = held()
    if not_a_count(count) then
      return redis.error_reply(not_a_lock)
    end
    took = count ~= false
  end
  redis.call('set', KEYS[5], '0', 'px', ARGV[6])
  if not took then
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
  local count = held()
  if not count then
    return -1
  end
  if not_a_count(count) then
    return redis.error_reply(not_a_lock)
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
  if ARGV[9] == 'spublish' then
    redis.call('spublish', KEYS[2], ARGV[1])
  else
    redis.call('publish', KEYS[2], ARGV[1])
  end
  if ARGV[8] == '1' then
    redis.call('set', KEYS[4], '0', 'px', ARGV[6])
  end
  result = 1
end
if ARGV[5] ~= 'undo' then
  redis.call('set', KEYS[3], result, 'px', ARGV[4])
end
return result
