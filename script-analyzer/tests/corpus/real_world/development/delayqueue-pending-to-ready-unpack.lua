-- Real-world bug fixture `delayqueue-pending-to-ready-unpack`: see manifest.toml beside this file.
local msgs = redis.call('ZRangeByScore', KEYS[1], '0', ARGV[1])
if #msgs > 0 then
  redis.call('LPush', KEYS[2], unpack(msgs))
  redis.call('ZRemRangeByScore', KEYS[1], '0', ARGV[1])
end
