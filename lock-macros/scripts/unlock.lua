-- The script of the attribute's documentation (its examples are doctests).
-- Releases the lock KEYS[1] if ARGV[2] holds it, and announces it by
-- publishing ARGV[1] on the channel KEYS[2]. Returns 1 when released, 0 when
-- the lock was free, nil when someone else holds it.
local holder = redis.call('GET', KEYS[1])
if not holder then
  return 0
end
if holder ~= ARGV[2] then
  return nil
end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', KEYS[2], ARGV[1])
return 1
