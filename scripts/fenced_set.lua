-- Writes a value guarded by a lock's fencing token: the resource keeps the
-- highest token it has seen, and refuses a writer whose token is lower (a
-- holder that was paused, or cut off, past its lease while another took
-- the lock).
--
-- KEYS[1]  the resource
-- KEYS[2]  the highest token seen for it
-- ARGV[1]  the writer's fencing token (LockGuard::token)
-- ARGV[2]  the value to write
--
-- Returns 1 when the value was written, 0 when the token was stale and
-- nothing changed.
local token = tonumber(ARGV[1])
if not token then
  return redis.error_reply('ERR the fencing token must be a number')
end
local highest = tonumber(redis.call('get', KEYS[2]))
if highest and token < highest then
  return 0
end
redis.call('set', KEYS[2], ARGV[1])
redis.call('set', KEYS[1], ARGV[2])
return 1
