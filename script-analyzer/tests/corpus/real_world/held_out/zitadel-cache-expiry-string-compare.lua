-- Real-world bug fixture `zitadel-cache-expiry-string-compare`: see manifest.toml beside this file.
local function getCall(...)
  local reply = redis.call(...)
  if reply == false then
    return nil
  end
  return reply
end
local expiry = getCall('HGET', KEYS[1], 'expiry')
if not (expiry == nil) and expiry > 0 then
  if tonumber(ARGV[1]) > tonumber(expiry) then
    redis.call('DEL', KEYS[1])
    return nil
  end
end
return redis.call('HGET', KEYS[1], 'object')
