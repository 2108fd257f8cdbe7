-- Bug: `tonumber` of a reply that may be false. For a missing key GET
-- answers `false`, `tonumber(false)` is nil, and the addition raises
-- "attempt to perform arithmetic on a nil value".
-- Reported: class of bug.
-- declared: keys=1 args=0
-- expect: maybe_false 7
local balance = tonumber(redis.call('GET', KEYS[1])) + 10
return balance
