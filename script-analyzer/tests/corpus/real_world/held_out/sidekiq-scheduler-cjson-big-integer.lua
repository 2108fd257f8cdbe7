-- Real-world bug fixture `sidekiq-scheduler-cjson-big-integer`: see manifest.toml beside this file.
local jobs = redis.call("zrangebyscore", KEYS[1], "-inf", ARGV[1], "LIMIT", 0, 100)
for _, text in ipairs(jobs) do
  local job = cjson.decode(text)
  job["enqueued_at"] = tonumber(ARGV[1])
  redis.call("lpush", ARGV[2] .. job["queue"], cjson.encode(job))
  redis.call("zrem", KEYS[1], text)
end
return #jobs
