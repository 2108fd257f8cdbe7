-- Real-world bug fixture `ioredis-zrank-compared-with-argv`: see manifest.toml beside this file.
if redis.call("zrank", KEYS[1], ARGV[2]) < ARGV[1] then
  return 1
end
return 0
