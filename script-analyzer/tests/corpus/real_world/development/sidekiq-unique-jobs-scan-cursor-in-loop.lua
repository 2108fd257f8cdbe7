-- Real-world bug fixture `sidekiq-unique-jobs-scan-cursor-in-loop`: see manifest.toml beside this file.
local digest = KEYS[1]
local count = tonumber(ARGV[1])
local cursor = "0"
local found = false
repeat
  local pagination = redis.call("SCAN", cursor, "MATCH", "*queue:*", "COUNT", count)
  local next_cursor = pagination[1]
  local queues = pagination[2]
  for _, queue in ipairs(queues) do
    cursor = next_cursor
    if redis.call("LPOS", queue, digest) then
      found = true
      break
    end
  end
until found == true or cursor == "0"
return found
