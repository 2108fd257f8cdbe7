-- Real-world bug fixture `redis-hincrby-computed-exponent-form`: see manifest.toml beside this file.
local amount = tonumber(ARGV[2])
local units = amount * 100000000
return redis.call('HINCRBY', KEYS[1], ARGV[1], units)
