-- Releases one read hold of a read/write lock, idempotently.
--
-- KEYS[1]  the lock (see rwlock_read_acquire.lua)
-- KEYS[2]  the channel its waiters listen on
-- KEYS[3]  this owner's hold timeouts (KEYS[3]:N)
-- KEYS[4]  the prefix of every owner's hold timeouts:
--          KEYS[4]:<owner>:rwlock_timeout:N
-- KEYS[5]  this release's latch
-- ARGV[1]  the message that wakes waiters ("1": all of them)
-- ARGV[2]  the owner
-- ARGV[3]  the publish command: PUBLISH or SPUBLISH
-- ARGV[4]  how long the latch is kept, in milliseconds
-- ARGV[5]  "" to release, or the hold count the owner must have (the undo
--          of an acquire whose reply was lost): otherwise nothing changes
--
-- Returns 1 when the lock is now free (waiters were told), 0 when it is
-- still held, nil when the owner holds no read lock, -1 when ARGV[5] did not
-- match. The lock's TTL becomes that of its longest-lived read hold, which
-- also clears readers whose holds expired without a release.
local earlier = redis.call('get', KEYS[5])
if earlier then
  return tonumber(earlier)
end
local held = tonumber(redis.call('hget', KEYS[1], ARGV[2]))
if held == nil or redis.call('hget', KEYS[1], 'mode') == false then
  return nil
end
if ARGV[5] ~= '' and held ~= tonumber(ARGV[5]) then
  return -1
end
local mode = redis.call('hget', KEYS[1], 'mode')
local left = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if left == 0 then
  redis.call('hdel', KEYS[1], ARGV[2])
end
redis.call('del', KEYS[3] .. ':' .. (left + 1))
if redis.call('hlen', KEYS[1]) > 1 then
  local longest = -3
  for _, field in ipairs(redis.call('hkeys', KEYS[1])) do
    local count = tonumber(redis.call('hget', KEYS[1], field))
    if type(count) == 'number' then
      for i = count, 1, -1 do
        local ttl = redis.call('pttl', KEYS[4] .. ':' .. field .. ':rwlock_timeout:' .. i)
        longest = math.max(ttl, longest)
      end
    end
  end
  if longest > 0 then
    redis.call('pexpire', KEYS[1], longest)
    redis.call('set', KEYS[5], 0, 'px', ARGV[4])
    return 0
  end
  if mode == 'write' then
    redis.call('set', KEYS[5], 0, 'px', ARGV[4])
    return 0
  end
end
redis.call('del', KEYS[1])
redis.call(ARGV[3], KEYS[2], ARGV[1])
redis.call('set', KEYS[5], 1, 'px', ARGV[4])
return 1
