-- Acquires, or re-enters, a reentrant lock stored as Redisson stores it.
--
-- KEYS[1]  the lock: a hash of owner -> hold count, whose TTL is the lease
-- KEYS[2]  the fencing token counter (Redisson's RFencedLock layout)
-- KEYS[3]  this attempt's key: '0' once the attempt was abandoned (a late
--          copy of it must do nothing), '1' once a re-entry took effect
-- ARGV[1]  the lease, in milliseconds (an integer >= 1)
-- ARGV[2]  the owner, "<client-uuid>:<owner-id>"
-- ARGV[3]  '1' to re-enter a hold the owner has, '0' for a new holder
-- ARGV[4]  how long the attempt's key lives, in milliseconds
-- ARGV[5]  how long the token counter lives, in milliseconds
--
-- Returns {code, value}:
--   {1, token}  the owner now holds the lock (token 0 for a re-entry);
--   {0, ttl}    another owner holds it: its remaining lease in ms (-1: none);
--   {2, 0}      re-entry refused: the owner holds nothing (any more);
--   {3, 0}      the attempt was abandoned before this copy of it ran.
-- A key that is not a reentrant lock is left alone: WRONGTYPE.
local lease = tonumber(ARGV[1])
if not lease or lease < 1 or lease % 1 ~= 0 then
  return redis.error_reply('ERR redlua: invalid lease ' .. ARGV[1])
end
local attempt = redis.call('get', KEYS[3])
if attempt == '0' then
  return {3, 0}
end
if attempt == '1' then
  return {1, 0}
end

-- The next fencing token: above every earlier one, and above the server's
-- clock in microseconds, so that it keeps growing after the counter expired.
local function next_token()
  local now = redis.call('time')
  local token = tonumber(now[1]) * 1000000 + tonumber(now[2])
  local last = redis.pcall('get', KEYS[2])
  if type(last) == 'string' and tonumber(last) and tonumber(last) >= token then
    token = tonumber(last) + 1
  end
  redis.call('set', KEYS[2], string.format('%.0f', token), 'px', ARGV[5])
  return token
end

-- Keeps the lease at least `lease` from now, never shorter.
local function extend()
  if redis.call('pttl', KEYS[1]) < lease then
    redis.call('pexpire', KEYS[1], ARGV[1])
  end
end

local kind = redis.call('type', KEYS[1])['ok']
if kind == 'none' then
  if ARGV[3] == '1' then
    return {2, 0}
  end
  local token = next_token()
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return {1, token}
end
if kind ~= 'hash' then
  return redis.error_reply('WRONGTYPE the key holds a ' .. kind .. ', not a lock')
end
local held = redis.call('hget', KEYS[1], ARGV[2])
if held then
  -- A hold count that is not a number was not written by a lock: the key
  -- is left alone (as any key that is not a lock of this kind).
  if not string.match(held, '^%d+$') then
    return redis.error_reply('WRONGTYPE the hold count of the owner is not a number')
  end
  if ARGV[3] == '1' then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    extend()
    redis.call('set', KEYS[3], '1', 'px', ARGV[4])
    return {1, 0}
  end
  -- An earlier copy of this same attempt took effect (its reply was lost).
  extend()
  return {1, tonumber(redis.pcall('get', KEYS[2])) or 0}
end
-- A reentrant lock has exactly one field, "<uuid>:<thread-id>" -> count.
local fields = redis.call('hlen', KEYS[1])
local pair = fields == 1 and redis.call('hgetall', KEYS[1]) or {}
if not (pair[1] and string.match(pair[1], ':%d+$') and string.match(pair[2], '^%d+$')) then
  return redis.error_reply('WRONGTYPE the key holds a hash that is not a reentrant lock')
end
if ARGV[3] == '1' then
  return {2, 0}
end
return {0, redis.call('pttl', KEYS[1])}
