-- Real-world bug fixture `sidekiq-unique-jobs-debug-flag-encoding`: see manifest.toml beside this file.
local digest       = KEYS[1]
local locked       = KEYS[4]
local job_id       = ARGV[1]
local pttl         = tonumber(ARGV[2])
local current_time = tonumber(ARGV[5])
local debug_lua    = tostring(ARGV[6]) == "1"
local script_name  = tostring(ARGV[8]) .. ".lua"

local function log_debug(message)
  if debug_lua ~= true then return end
  redis.log(redis.LOG_DEBUG, script_name .. " - " .. message)
end

log_debug("BEGIN lock digest: " .. digest .. " job_id: " .. job_id)
if redis.call("HEXISTS", locked, job_id) == 1 then
  log_debug(locked .. " already locked with job_id: " .. job_id)
  return job_id
end
redis.call("HSET", locked, job_id, current_time)
if pttl and pttl > 0 then
  redis.call("PEXPIRE", locked, pttl)
end
return job_id
