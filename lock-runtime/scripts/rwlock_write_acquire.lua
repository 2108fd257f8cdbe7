-- Acquires, or re-enters, the write side of a read/write lock stored as
-- Redisson stores it.
--
-- KEYS[1]  the lock (see rwlock_read_acquire.lua)
-- KEYS[2]  the mark a waiting writer leaves when writers are preferred
-- KEYS[3]  the fencing token counter
-- KEYS[4]  this attempt's key (see lock_acquire.lua)
-- ARGV[1]  the lease, in milliseconds (an integer >= 1)
-- ARGV[2]  the owner's writer field, <owner>:write
-- ARGV[3]  the owner's reader field, <owner>
-- ARGV[4]  '1' when writers are preferred: leave the mark while waiting
-- ARGV[5]  how long the mark lives, in milliseconds (the writer renews it
--          each time it tries again)
-- ARGV[6]  '1' to re-enter a write hold the owner has, '0' for a new holder
-- ARGV[7]  how long the attempt's key lives, in milliseconds
-- ARGV[8]  how long the token counter lives, in milliseconds
--
-- Returns {code, value} as lock_acquire.lua. An owner re-entering with
-- only read holds gets the error LOCKUPGRADE: it would wait for itself
-- forever. A key that is not a read/write lock is left alone: WRONGTYPE.
local lease = tonumber(ARGV[1])
if not lease or lease < 1 or lease % 1 ~= 0 then
  return redis.error_reply('ERR redlua: invalid lease ' .. ARGV[1])
end
-- A hold count that is not a number was not written by a lock: the key is
-- left alone (as any key that is not a lock of this kind).
if redis.call('type', KEYS[1])['ok'] == 'hash' then
  local count = redis.call('hget', KEYS[1], ARGV[2])
  if count and not string.match(count, '^%d+$') then
    return redis.error_reply('WRONGTYPE the write hold count of the owner is not a number')
  end
end
local attempt = redis.call('get', KEYS[4])
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
local function extend()
  if redis.call('pttl', KEYS[1]) < lease then
    redis.call('pexpire', KEYS[1], ARGV[1])
  end
end
if ARGV[6] == '1' then
  if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    extend()
    redis.call('set', KEYS[4], '1', 'px', ARGV[7])
    return {1, 0}
  end
  if mode == 'read' and redis.call('hexists', KEYS[1], ARGV[3]) == 1 then
    return redis.error_reply('LOCKUPGRADE the owner holds the read lock; upgrading to write would wait forever')
  end
  return {2, 0}
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  -- An earlier copy of this same attempt took effect (its reply was lost).
  extend()
  return {1, tonumber(redis.pcall('get', KEYS[3])) or 0}
end
if mode == false then
  local now = redis.call('time')
  local token = tonumber(now[1]) * 1000000 + tonumber(now[2])
  local last = redis.pcall('get', KEYS[3])
  if type(last) == 'string' and tonumber(last) and tonumber(last) >= token then
    token = tonumber(last) + 1
  end
  redis.call('set', KEYS[3], string.format('%.0f', token), 'px', ARGV[8])
  redis.call('hset', KEYS[1], 'mode', 'write')
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  redis.call('del', KEYS[2])
  return {1, token}
end
if ARGV[4] == '1' then
  redis.call('set', KEYS[2], ARGV[2], 'px', ARGV[5])
end
return {0, redis.call('pttl', KEYS[1])}
