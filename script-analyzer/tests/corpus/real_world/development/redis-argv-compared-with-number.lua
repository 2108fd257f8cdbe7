-- Real-world bug fixture `redis-argv-compared-with-number`: see manifest.toml beside this file.
local delta = ARGV[1]
if delta > 0 then
  return redis.call('INCRBY', KEYS[1], delta)
end
return redis.call('GET', KEYS[1])
