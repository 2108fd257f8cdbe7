#!lua flags=no-writes
-- Reads everything about a lock in one round trip, changing nothing.
--
-- KEYS[1]  the lock
-- KEYS[2]  its fencing token counter
--
-- Returns {type, ttl, token, fields}: the key's type ('none' when free),
-- its remaining time to live in ms (-2 when free, -1 without expiry), the
-- token counter's value ('' when it has none), and for a hash its fields
-- and values, flat. The caller reads the layout (see inspect.rs).
local kind = redis.call('type', KEYS[1])['ok']
local token = redis.pcall('get', KEYS[2])
if type(token) ~= 'string' then
  token = ''
end
local fields = {}
if kind == 'hash' then
  fields = redis.call('hgetall', KEYS[1])
end
return {kind, redis.call('pttl', KEYS[1]), token, fields}
