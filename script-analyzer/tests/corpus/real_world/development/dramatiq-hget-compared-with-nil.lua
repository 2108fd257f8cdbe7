-- Real-world bug fixture `dramatiq-hget-compared-with-nil`: see manifest.toml beside this file.
local queue_messages = KEYS[1]
local messages = {}
local message_ids = redis.call("lrange", KEYS[2], 0, tonumber(ARGV[1]) - 1)
for i = 1, #message_ids do
  local message_id = message_ids[i]
  local message = redis.call("hget", queue_messages, message_id)
  if message ~= nil then
    table.insert(messages, message)
  end
end
return messages
