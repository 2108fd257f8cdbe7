-- Real-world bug fixture `bull-stalled-batch-unpack`: see manifest.toml beside this file.
local rcall = redis.call
local stalled = {}
local stalling = rcall('SMEMBERS', KEYS[1])
for _, jobId in ipairs(stalling) do
  if rcall('EXISTS', KEYS[4] .. jobId .. ':lock') == 0 then
    rcall('LREM', KEYS[3], 1, jobId)
    table.insert(stalled, jobId)
  end
end
if #stalled > 0 then
  rcall('LPUSH', KEYS[2], unpack(stalled))
end
return stalled
