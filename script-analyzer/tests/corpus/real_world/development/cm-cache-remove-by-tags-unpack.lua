-- Real-world bug fixture `cm-cache-remove-by-tags-unpack`: see manifest.toml beside this file.
local tags = {}
for i = 1, #ARGV do
  tags[i] = KEYS[1] .. ARGV[i]
end
local keysToDel = redis.call('SUNION', unpack(tags))
if #keysToDel > 0 then
  redis.call('DEL', unpack(keysToDel))
end
redis.call('DEL', unpack(tags))
return #keysToDel
