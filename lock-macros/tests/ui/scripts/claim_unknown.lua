-- Replies with whatever the key holds: no code the analyzer can tell.
local stored = redis.call('get', KEYS[1])
if not stored then
  return redis.error_reply('ERR nothing stored')
end
return tonumber(stored)
