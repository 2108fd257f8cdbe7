-- Real-world bug fixture `bullmq-job-counter-exponent-form`: see manifest.toml beside this file.
local rcall = redis.call
local jobCounter = rcall("INCR", KEYS[4])
local jobId = ARGV[2]
if jobId == "" then
  jobId = jobCounter
end
local jobIdKey = ARGV[1] .. jobId
rcall("HSET", jobIdKey, "name", ARGV[3], "data", ARGV[4])
rcall("SET", KEYS[5], jobId)
rcall("LPUSH", KEYS[1], jobId)
return jobId .. ""
