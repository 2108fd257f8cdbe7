-- Real-world bug fixture `cm-cache-save-many-tags-unpack`: see manifest.toml beside this file.
local id = ARGV[1]
redis.call('HSET', KEYS[1], 'd', ARGV[2], 't', ARGV[3])
if #ARGV > 3 then
  redis.call('SADD', KEYS[2], unpack(ARGV, 4))
  for i = 4, #ARGV do
    redis.call('SADD', KEYS[3] .. ARGV[i], id)
  end
end
return 1
