-- Writes, refreshes or removes the identity of one holder of a lock: a small
-- hash next to the lock, under its hash tag, that never outlives the lock.
--   KEYS[1]  the lock
--   KEYS[2]  the identity, {name}:redlua_holder:<owner>
--   ARGV[1]  the holder's owner (`<uuid>:<n>`): its field in the lock is
--            `<owner>`, or `<owner>:write` for the writer of a read/write lock
--   ARGV[2]  host    ARGV[3]  pid    ARGV[4]  program    ARGV[5]  since
-- Returns the identity's TTL in milliseconds (the lock's), or 0 when the
-- holder no longer holds the lock (the identity is deleted then).
local held = redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1
  or redis.call('HEXISTS', KEYS[1], ARGV[1] .. ':write') == 1
local ttl = redis.call('PTTL', KEYS[1])
if not held or ttl <= 0 then
  redis.call('DEL', KEYS[2])
  return 0
end
redis.call('HSET', KEYS[2], 'host', ARGV[2], 'pid', ARGV[3], 'program', ARGV[4], 'since', ARGV[5])
redis.call('PEXPIRE', KEYS[2], ttl)
return ttl
