#!lua flags=no-writes
-- Reads everything about a lock in one round trip, changing nothing.
--
-- KEYS[1]  the lock
-- KEYS[2]  its fencing token counter
-- KEYS[3]  its queue, if it is a fair lock (Redisson's RFairLock)
--
-- Returns {type, ttl, token, fields, waiting}: the key's type ('none' when
-- free), its remaining time to live in ms (-2 when free, -1 without
-- expiry), the token counter's value ('' when it has none), for a hash its
-- fields and values, flat, and the owners in the queue, head first (none
-- when there is no queue). The caller reads the layout (see inspect.rs).
local kind = redis.call('type', KEYS[1])['ok']
local token = redis.pcall('get', KEYS[2])
if type(token) ~= 'string' then
  token = ''
end
local fields = {}
if kind == 'hash' then
  fields = redis.call('hgetall', KEYS[1])
end
local waiting = {}
if redis.call('type', KEYS[3])['ok'] == 'list' then
  waiting = redis.call('lrange', KEYS[3], 0, -1)
end
return {kind, redis.call('pttl', KEYS[1]), token, fields, waiting}
