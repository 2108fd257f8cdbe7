-- Releases one read hold of a read/write lock, or undoes an abandoned
-- acquire of one.
--
-- KEYS[1]  the lock (see rwlock_read_acquire.lua)
-- KEYS[2]  the channel its waiters listen on
-- KEYS[3]  this owner's hold timeouts (KEYS[3]:N)
-- KEYS[4]  the prefix of every owner's hold timeouts:
--          KEYS[4]:<owner>:rwlock_timeout:N
-- KEYS[5]  this release's latch
-- KEYS[6]  the attempt key of the acquire that made the owner a holder
-- KEYS[7]  the attempt key of the hold released (see lock_release.lua)
-- ARGV[1]  the message that wakes waiters (all of them)
-- ARGV[2]  the owner
-- ARGV[3]  how long the latch is kept, in milliseconds
-- ARGV[4]  'release' or 'undo' (see lock_release.lua)
-- ARGV[5]  how long an attempt key lives once it is closed, in milliseconds
-- ARGV[6]  '1' when KEYS[7] is a re-entry
-- ARGV[7]  '1' to close the attempt keys, '0' when no late copy can come
-- ARGV[8]  'spublish' to announce on a sharded channel (Redis Cluster 7+),
--          'publish' otherwise
--
-- Returns 1 when the lock is now free (waiters were told), 0 when it is
-- still held, -1 when the owner holds no read lock, -2 (undo only) when the
-- acquire never took effect. The lock's TTL becomes that of its
-- longest-lived read hold, which also clears readers whose holds expired
-- without a release.
local function holds()
  if redis.call('type', KEYS[1])['ok'] ~= 'hash' or redis.call('hget', KEYS[1], 'mode') == false then
    return nil
  end
  return tonumber(redis.call('hget', KEYS[1], ARGV[2]))
end
-- A hold count that is not a number was not written by a lock: the key is
-- left alone (as any key that is not a lock of this kind).
if redis.call('type', KEYS[1])['ok'] == 'hash' then
  local count = redis.call('hget', KEYS[1], ARGV[2])
  if count and not string.match(count, '^%d+$') then
    return redis.error_reply('WRONGTYPE the read hold count of the owner is not a number')
  end
end
if ARGV[4] == 'undo' then
  local took
  if ARGV[6] == '1' then
    took = redis.call('get', KEYS[7]) == '1'
  else
    took = holds() ~= nil
  end
  redis.call('set', KEYS[7], '0', 'px', ARGV[5])
  if not took or holds() == nil then
    return -2
  end
else
  -- A release retried with the same latch answers what the first did (a
  -- latch holds 0 or 1; anything else was not written by a release).
  local earlier = redis.call('get', KEYS[5])
  if earlier == '1' then
    return 1
  elseif earlier == '0' then
    return 0
  elseif earlier then
    return redis.error_reply('ERR redlua: invalid release latch ' .. earlier)
  end
  if holds() == nil then
    return -1
  end
  if ARGV[6] == '1' then
    if ARGV[7] == '1' then
      redis.call('set', KEYS[7], '0', 'px', ARGV[5])
    else
      redis.call('del', KEYS[7])
    end
  end
end
local function finish(result)
  if ARGV[4] ~= 'undo' then
    redis.call('set', KEYS[5], result, 'px', ARGV[3])
  end
  return result
end
local mode = redis.call('hget', KEYS[1], 'mode')
local left = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if left <= 0 then
  redis.call('hdel', KEYS[1], ARGV[2])
  if ARGV[7] == '1' then
    redis.call('set', KEYS[6], '0', 'px', ARGV[5])
  end
end
redis.call('del', KEYS[3] .. ':' .. (left + 1))
if redis.call('hlen', KEYS[1]) > 1 then
  local longest = -3
  -- One HGETALL, not an HGET per holder; a PTTL per read hold is left:
  -- the layout keeps no index of their deadlines.
  local all = redis.call('hgetall', KEYS[1])
  for f = 1, #all, 2 do
    local field, count = all[f], tonumber(all[f + 1])
    if type(count) == 'number' then
      for i = count, 1, -1 do
        local ttl = redis.call('pttl', KEYS[4] .. ':' .. field .. ':rwlock_timeout:' .. i)
        longest = math.max(ttl, longest)
      end
    end
  end
  if longest > 0 then
    redis.call('pexpire', KEYS[1], string.format('%.0f', longest))
    return finish(0)
  end
  if mode == 'write' then
    return finish(0)
  end
end
redis.call('del', KEYS[1])
if ARGV[8] == 'spublish' then
  redis.call('spublish', KEYS[2], ARGV[1])
else
  redis.call('publish', KEYS[2], ARGV[1])
end
return finish(1)
