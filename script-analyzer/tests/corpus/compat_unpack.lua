-- Push many values at once, on any Lua: `table.unpack` is Lua 5.2+, Redis's
-- Lua 5.1 has only the global `unpack`.
-- KEYS[1] list; ARGV the values; returns the list's new length
local unpack = table.unpack or unpack
local length = redis.call('RPUSH', KEYS[1], unpack(ARGV))
return (table.unpack or unpack)({length})
