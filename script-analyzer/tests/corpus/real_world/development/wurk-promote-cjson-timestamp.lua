-- Real-world bug fixture `wurk-promote-cjson-timestamp`: see manifest.toml beside this file.
local jobs = redis.call("zrangebyscore", KEYS[1], "-inf", ARGV[1])
for i = 1, #jobs do
  local job = jobs[i]
  local decoded = cjson.decode(job)
  decoded["enqueued_at"] = tonumber(ARGV[3])
  local q = decoded["queue"]
  redis.call("sadd", KEYS[2], q)
  redis.call("lpush", ARGV[2] .. q, cjson.encode(decoded))
  redis.call("zrem", KEYS[1], job)
end
return #jobs
