-- Real-world bug fixture `redis-pack-undefined-global`: see manifest.toml beside this file.
local members = pack(unpack(ARGV, 2, #ARGV))
local count = redis.call('sadd', KEYS[1], unpack(members))
redis.call('pexpire', KEYS[1], ARGV[1])
return count
