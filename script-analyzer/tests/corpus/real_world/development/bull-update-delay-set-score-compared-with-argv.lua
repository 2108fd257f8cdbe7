-- Real-world bug fixture `bull-update-delay-set-score-compared-with-argv`: see manifest.toml beside this file.
local RESULT = redis.call("ZRANGE", KEYS[1], 0, 0, "WITHSCORES")
local jobId = RESULT[1]
local score = RESULT[2]
if (score ~= nil) then
  score = score / 0x100000
  if (score <= ARGV[2]) then
    redis.call("ZREM", KEYS[1], jobId)
    redis.call("LREM", KEYS[2], 0, jobId)
    redis.call("RPUSH", KEYS[3], jobId)
    redis.call("PUBLISH", KEYS[4], jobId)
    redis.call("HSET", ARGV[1] .. jobId, "delay", 0)
    local nextTimestamp = redis.call("ZRANGE", KEYS[1], 0, 0, "WITHSCORES")[2]
    if (nextTimestamp ~= nil) then
      redis.call("PUBLISH", KEYS[1], nextTimestamp / 0x100000)
    end
    return nextTimestamp
  end
  return score
end
