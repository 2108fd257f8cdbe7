-- Reads the state of a reentrant lock in one round trip.
--
-- KEYS[1]  the lock
-- ARGV[1]  the owner whose hold count is wanted
--
-- Returns {held, ttl, count}: held is 1 when the lock exists, ttl its
-- remaining time to live in milliseconds (-2 when free, -1 without expiry),
-- count the owner's hold count. A key that is not a lock is WRONGTYPE.
local kind = redis.call('type', KEYS[1])['ok']
if kind == 'none' then
  return {0, -2, 0}
end
if kind ~= 'hash' then
  return redis.error_reply('WRONGTYPE the key holds a ' .. kind .. ', not a lock')
end
local count = tonumber(redis.call('hget', KEYS[1], ARGV[1])) or 0
return {1, redis.call('pttl', KEYS[1]), count}
