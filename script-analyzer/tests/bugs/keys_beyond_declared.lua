-- Bug: KEYS beyond the declared keys. The caller passes one key, so
-- KEYS[2] is nil and `redis.call` raises "Lua redis() command arguments
-- must be strings or integers".
-- Reported: class of bug.
-- declared: keys=1 args=0
-- expect: arity 7
return redis.call('RENAME', KEYS[1], KEYS[2])
