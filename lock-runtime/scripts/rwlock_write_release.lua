-- Releases one write hold of a read/write lock, or undoes an abandoned
-- acquire of one.
--
-- KEYS[1]  the lock (see rwlock_read_acquire.lua)
-- KEYS[2]  the channel its waiters listen on
-- KEYS[3]  this release's latch
-- KEYS[4]  the attempt key of the acquire that made the owner the writer
-- KEYS[5]  the attempt key of the hold released (see lock_release.lua)
-- ARGV[1]  the message that wakes waiters (all of them)
-- ARGV[2]  the lease, in milliseconds, for the holds that remain
-- ARGV[3]  the owner's writer field, <owner>:write
-- ARGV[4]  how long the latch is kept, in milliseconds
-- ARGV[5]  'release' or 'undo' (see lock_release.lua)
-- ARGV[6]  how long an attempt key lives once it is closed, in milliseconds
-- ARGV[7]  '1' when KEYS[5] is a re-entry
-- ARGV[8]  '1' to close the attempt keys, '0' when no late copy can come
-- ARGV[9]  'spublish' to announce on a sharded channel (Redis Cluster 7+),
--          'publish' otherwise
--
-- Returns 1 when the write lock is released (the lock is free, or only the
-- owner's read holds remain: readers may enter, and are woken), 0 when the
-- owner still holds it, -1 when it does not, -2 (undo only) when the
-- acquire never took effect.
local function held()
  if redis.call('type', KEYS[1])['ok'] ~= 'hash' or redis.call('hget', KEYS[1], 'mode') ~= 'write' then
    return nil
  end
  return tonumber(redis.call('hget', KEYS[1], ARGV[3]))
end
-- A hold count that is not a number was not written by a lock: the key is
-- left alone (as any key that is not a lock of this kind).
if redis.call('type', KEYS[1])['ok'] == 'hash' then
  local count = redis.call('hget', KEYS[1], ARGV[3])
  if count and not string.match(count, '^%d+$') then
    return redis.error_reply('WRONGTYPE the write hold count of the owner is not a number')
  end
end
if ARGV[5] == 'undo' then
  local took
  if ARGV[7] == '1' then
    took = redis.call('get', KEYS[5]) == '1'
  else
    took = held() ~= nil
  end
  redis.call('set', KEYS[5], '0', 'px', ARGV[6])
  if not took or held() == nil then
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
  if held() == nil then
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
local function finish(result)
  if ARGV[5] ~= 'undo' then
    redis.call('set', KEYS[3], result, 'px', ARGV[4])
  end
  return result
end
if held() > 1 then
  redis.call('hincrby', KEYS[1], ARGV[3], -1)
  if redis.call('pttl', KEYS[1]) < tonumber(ARGV[2]) then
    redis.call('pexpire', KEYS[1], ARGV[2])
  end
  return finish(0)
end
redis.call('hdel', KEYS[1], ARGV[3])
if ARGV[8] == '1' then
  redis.call('set', KEYS[4], '0', 'px', ARGV[6])
end
if redis.call('hlen', KEYS[1]) == 1 then
  redis.call('del', KEYS[1])
else
  -- The owner keeps reading (a downgrade): other readers may enter now.
  redis.call('hset', KEYS[1], 'mode', 'read')
end
if ARGV[9] == 'spublish' then
  redis.call('spublish', KEYS[2], ARGV[1])
else
  redis.call('publish', KEYS[2], ARGV[1])
end
return finish(1)
