-- Renews the leases of locks held by the watchdog's client, in one batch.
--
-- KEYS[i]      a lock (a reentrant lock, or a read/write lock)
-- ARGV[1]      the new lease, in milliseconds (an integer >= 1)
-- ARGV[2i]     the field whose hold keeps KEYS[i] alive: the owner, or
--              <owner>:write for a write hold
-- ARGV[2i+1]   for a read hold, the owner's hold timeouts (ARGV[2i+1]:N for
--              each of its holds, renewed too); "" otherwise
--
-- Returns a list: 1 for each lock whose lease now runs at least ARGV[1]
-- from now, 0 for each lock the field no longer holds (expired, deleted,
-- taken over, or not a lock). A lease is never shortened. Durations go to
-- Redis as the strings they came in (a Lua number that large would be
-- written in exponent form, which Redis refuses).
local lease = tonumber(ARGV[1])
if not lease or lease < 1 or lease % 1 ~= 0 then
  return redis.error_reply('ERR redlua: invalid lease ' .. ARGV[1])
end
local renewed = {}
for i = 1, #KEYS do
  local field = ARGV[2 * i]
  local timeouts = ARGV[2 * i + 1]
  local count = nil
  if redis.call('type', KEYS[i])['ok'] == 'hash' then
    count = tonumber(redis.call('hget', KEYS[i], field))
  end
  if count then
    if redis.call('pttl', KEYS[i]) < lease then
      redis.call('pexpire', KEYS[i], ARGV[1])
    end
    if timeouts ~= '' then
      for n = 1, count do
        local timeout = timeouts .. ':' .. n
        if redis.call('pttl', timeout) < lease then
          redis.call('pexpire', timeout, ARGV[1])
        end
      end
    end
    renewed[i] = 1
  else
    renewed[i] = 0
  end
end
return renewed
