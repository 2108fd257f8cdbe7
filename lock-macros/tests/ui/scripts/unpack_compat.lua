-- `table.unpack` is Lua 5.2+; Redis's Lua 5.1 has the global `unpack`.
local unpack = table.unpack or unpack
return redis.call('MGET', unpack(KEYS))
