-- Real-world bug fixture `tporadowski-redis-decimal-returned-truncated`: see manifest.toml beside this file.
local incomingVal = ARGV[1]

redis.call('hset', 'incomingVal:', 'strVal', incomingVal)
redis.call('hset', 'incomingVal:', 'numVal', tonumber(incomingVal))

local a = redis.call('hget', 'incomingVal:', 'strVal')
local b = redis.call('hget', 'incomingVal:', 'numVal')

return {a, b, tonumber(b)}
