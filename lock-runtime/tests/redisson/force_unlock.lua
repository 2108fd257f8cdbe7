-- What Redisson's RLock#forceUnlock sends, as a test fixture for
-- interoperability: written here from the wire format described in the
-- project's design notes (shared/design/redisson-wire.md: "Force release:
-- DEL name, publish 0"), not transcribed. Redisson is Apache-2.0 licensed.
--
-- KEYS[1]  the lock (getRawName())
-- KEYS[2]  its channel (getChannelName() = "redisson_lock__channel:{name}")
-- ARGV[1]  LockPubSub.UNLOCK_MESSAGE (0)
--
-- Returns 1 when there was a lock (its waiters are told), else 0.
if redis.call('del', KEYS[1]) == 1 then
  redis.call('publish', KEYS[2], ARGV[1])
  return 1
end
return 0
