-- Real-world bug fixture `bullmq-decode-missing-job-opts`: see manifest.toml beside this file.
local rcall = redis.call
local jobId = ARGV[1]
local jobKey = KEYS[3] .. jobId
if rcall("SREM", KEYS[1], jobId) == 1 then
  local opts = cjson.decode(rcall("HGET", jobKey, "opts"))
  local attempts = opts['attempts'] or 0
  rcall("LPUSH", KEYS[2], jobId)
  return attempts
end
return 0
