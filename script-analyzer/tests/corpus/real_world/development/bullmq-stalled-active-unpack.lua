-- Real-world bug fixture `bullmq-stalled-active-unpack`: see manifest.toml beside this file.
local rcall = redis.call
local stalling = rcall('SMEMBERS', KEYS[1])
for _, jobId in ipairs(stalling) do
  rcall('LREM', KEYS[3], 1, jobId)
  rcall('LPUSH', KEYS[2], jobId)
end
local active = rcall('LRANGE', KEYS[3], 0, -1)
if #active > 0 then
  rcall('SADD', KEYS[1], unpack(active))
end
return #stalling
