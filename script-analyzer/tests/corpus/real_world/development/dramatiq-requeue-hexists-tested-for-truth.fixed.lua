-- Real-world bug fixture `dramatiq-requeue-hexists-tested-for-truth`: see manifest.toml beside this file.
local queue_full_name = KEYS[1]
local queue_acks = KEYS[2]
local queue_messages = KEYS[3]

local requeued = 0
for i = 1, #ARGV do
  local message_id = ARGV[i]
  if redis.call("srem", queue_acks, message_id) > 0 then
    if redis.call("hexists", queue_messages, message_id) > 0 then
      redis.call("rpush", queue_full_name, message_id)
      requeued = requeued + 1
    end
  end
end
return requeued
