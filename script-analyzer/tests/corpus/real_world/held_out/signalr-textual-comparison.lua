-- Real-world bug fixture `signalr-textual-comparison`: see manifest.toml beside this file.
local newvalue = redis.call('GET', KEYS[1])
if newvalue < ARGV[1] then
  return redis.call('SET', KEYS[1], ARGV[1])
else
  return nil
end
