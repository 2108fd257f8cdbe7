-- Bug: os.time in a script. Redis's sandbox has no `os.time` (scripts must
-- be deterministic; use `redis.call('TIME')`): the script raises.
-- Reported: class of bug.
-- declared: keys=1 args=0
-- expect: unknown_member 6
local now = os.time()
return redis.call('ZADD', KEYS[1], now, 'ping')
