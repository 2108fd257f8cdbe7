-- Undoes an acquire whose reply was never read (its caller gave up while it
-- was under way), if and only if it took effect.
--
-- KEYS[1]  the lock
-- KEYS[2]  the channel its waiters listen on
-- ARGV[1]  the owner
-- ARGV[2]  the hold count the owner has if the acquire took effect
-- ARGV[3]  the lease, in milliseconds, for the holds that remain
-- ARGV[4]  the message that wakes a waiter ("0")
-- ARGV[5]  the publish command: PUBLISH or SPUBLISH
--
-- Returns 1 when a hold was undone, 0 when the acquire had not taken effect.
if redis.call('type', KEYS[1])['ok'] ~= 'hash' then
  return 0
end
local count = tonumber(redis.call('hget', KEYS[1], ARGV[1]))
if count == nil or count ~= tonumber(ARGV[2]) then
  return 0
end
if count > 1 then
  redis.call('hincrby', KEYS[1], ARGV[1], -1)
  redis.call('pexpire', KEYS[1], ARGV[3])
  return 1
end
redis.call('del', KEYS[1])
redis.call(ARGV[5], KEYS[2], ARGV[4])
return 1
