-- Acquires, or re-enters, the read side of a read/write lock stored as
-- Redisson stores it.
--
-- KEYS[1]  the lock: a hash with `mode` (read|write), readers as
--          <owner> -> hold count, the writer as <owner>:write -> hold count
-- KEYS[2]  this owner's hold timeouts: KEYS[2]:N lives as long as hold N
-- KEYS[3]  the mark a waiting writer leaves when writers are preferred
-- ARGV[1]  the lease, in milliseconds
-- ARGV[2]  the owner
-- ARGV[3]  the owner's writer field, <owner>:write
-- ARGV[4]  "1" when writers are preferred: a new reader waits behind a
--          waiting writer
--
-- Returns nil when the owner now holds a read lock, otherwise how long to
-- wait at most, in milliseconds (the lock's or the waiting writer's TTL).
local mode = redis.call('hget', KEYS[1], 'mode')
local reentry = mode == 'read' and redis.call('hexists', KEYS[1], ARGV[2]) == 1
if ARGV[4] == '1' and not reentry and mode ~= 'write' and redis.call('exists', KEYS[3]) == 1 then
  return redis.call('pttl', KEYS[3])
end
if mode == false then
  redis.call('hset', KEYS[1], 'mode', 'read')
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('set', KEYS[2] .. ':1', 1, 'px', ARGV[1])
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if mode == 'read' or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then
  local hold = redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('set', KEYS[2] .. ':' .. hold, 1, 'px', ARGV[1])
  local remaining = redis.call('pttl', KEYS[1])
  redis.call('pexpire', KEYS[1], math.max(remaining, tonumber(ARGV[1])))
  return nil
end
return redis.call('pttl', KEYS[1])
