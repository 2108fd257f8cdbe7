-- Renews the leases of locks held by the watchdog's client, in one batch.
--
-- KEYS[i]    a lock
-- ARGV[1]    the new lease, in milliseconds
-- ARGV[i+1]  the owner whose hold of KEYS[i] keeps it alive
--
-- Returns a list: 1 for each lock whose lease was renewed, 0 for each lock
-- the owner no longer holds (expired, deleted, taken over, or not a lock).
local renewed = {}
for i = 1, #KEYS do
  local owner = ARGV[i + 1]
  if redis.call('type', KEYS[i])['ok'] == 'hash' and redis.call('hexists', KEYS[i], owner) == 1 then
    redis.call('pexpire', KEYS[i], ARGV[1])
    renewed[i] = 1
  else
    renewed[i] = 0
  end
end
return renewed
