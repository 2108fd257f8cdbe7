-- Acquires, or re-enters, the read side of a read/write lock stored as
-- Redisson stores it.
--
-- KEYS[1]  the lock: a hash with `mode` (read|write), readers as
--          <owner> -> hold count, the writer as <owner>:write -> hold count
-- KEYS[2]  this owner's hold timeouts: KEYS[2]:N lives as long as hold N
-- KEYS[3]  the mark a waiting writer leaves when writers are preferred
-- KEYS[4]  the fencing token counter
-- KEYS[5]  this attempt's key (see lock_acquire.lua)
-- ARGV[1]  the lease, in milliseconds (an integer >= 1)
-- ARGV[2]  the owner
-- ARGV[3]  the owner's writer field, <owner>:write
-- ARGV[4]  '1' when writers are preferred: a new reader waits behind a
--          waiting writer
-- ARGV[5]  '1' to re-enter (the owner holds a read or the write lock), '0'
--          for a new holder
-- ARGV[6]  how long the attempt's key lives, in milliseconds
-- ARGV[7]  how long the token counter lives, in milliseconds
--
-- Returns {code, value} as lock_acquire.lua: {1, token} held, {0, ttl} busy
-- (how long to wait at most), {2, 0} re-entry refused, {3, 0} abandoned.
-- A key that is not a read/write lock is left alone: WRONGTYPE.
local lease = tonumber(ARGV[1])
if not lease or lease < 1 or lease % 1 ~= 0 then
  return redis.error_reply('ERR redlua: invalid lease ' .. ARGV[1])
end
-- A hold count that is not a number was not written by a lock: the key is
-- left alone (as any key that is not a lock of this kind).
if redis.call('type', KEYS[1])['ok'] == 'hash' then
  local count = redis.call('hget', KEYS[1], ARGV[2])
  if count and not string.match(count, '^%d+$') then
    return redis.error_reply('WRONGTYPE the read hold count of the owner is not a number')
  end
end
local attempt = redis.call('get', KEYS[5])
if attempt == '0' then
  return {3, 0}
end
if attempt == '1' then
  return {1, 0}
end
local kind = redis.call('type', KEYS[1])['ok']
if kind ~= 'none' and kind ~= 'hash' then
  return redis.error_reply('WRONGTYPE the key holds a ' .. kind .. ', not a lock')
end
local mode = redis.call('hget', KEYS[1], 'mode')
if kind == 'hash' and mode ~= 'read' and mode ~= 'write' then
  return redis.error_reply('WRONGTYPE the key holds a hash that is not a read/write lock')
end

local function next_token()
  local now = redis.call('time')
  local token = tonumber(now[1]) * 1000000 + tonumber(now[2])
  local last = redis.pcall('get', KEYS[4])
  if type(last) == 'string' and tonumber(last) and tonumber(last) >= token then
    token = tonumber(last) + 1
  end
  redis.call('set', KEYS[4], string.format('%.0f', token), 'px', ARGV[7])
  return token
end

-- One more read hold of the owner, with its own timeout key.
local function hold()
  local n = redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('set', KEYS[2] .. ':' .. n, 1, 'px', ARGV[1])
  if redis.call('pttl', KEYS[1]) < lease then
    redis.call('pexpire', KEYS[1], ARGV[1])
  end
end

if ARGV[5] == '1' then
  if (mode == 'read' and redis.call('hexists', KEYS[1], ARGV[2]) == 1)
    or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then
    hold()
    redis.call('set', KEYS[5], '1', 'px', ARGV[6])
    return {1, 0}
  end
  return {2, 0}
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  -- An earlier copy of this same attempt took effect (its reply was lost).
  return {1, tonumber(redis.pcall('get', KEYS[4])) or 0}
end
if ARGV[4] == '1' and mode ~= 'write' and redis.call('exists', KEYS[3]) == 1 then
  return {0, redis.call('pttl', KEYS[3])}
end
if mode == false then
  local token = next_token()
  redis.call('hset', KEYS[1], 'mode', 'read')
  hold()
  return {1, token}
end
if mode == 'read' then
  local token = next_token()
  hold()
  return {1, token}
end
return {0, redis.call('pttl', KEYS[1])}
