-- Bug: a reply that may be nil returned as a string. GET of a missing key
-- replies nil (`false` in Lua), which reaches the caller as nil: with
-- `returns = String` the call fails with a type error instead of `None`.
-- Reported: class of bug (redis-rs: "Response was of incompatible type"
-- for a nil reply read as a String).
-- declared: keys=1 args=1
-- returns: string
-- expect: nil_return 10
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return redis.call('GET', KEYS[1])
