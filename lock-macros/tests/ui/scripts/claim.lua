-- Claims KEYS[1] for ARGV[1]: {1, ttl} when claimed, {0, ttl} when another
-- owner has it, -1 when ARGV[1] is empty.
if ARGV[1] == '' then
  return -1
end
if redis.call('set', KEYS[1], ARGV[1], 'nx', 'px', 1000) then
  return {1, 1000}
end
return {0, redis.call('pttl', KEYS[1])}
