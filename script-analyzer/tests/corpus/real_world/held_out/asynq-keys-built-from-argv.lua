-- Real-world bug fixture `asynq-keys-built-from-argv`: see manifest.toml beside this file.
local ids = redis.call("ZRANGEBYSCORE", KEYS[1], "-inf", ARGV[1], "LIMIT", 0, tonumber(ARGV[3]))
for _, id in ipairs(ids) do
  redis.call("DEL", ARGV[2] .. id)
  redis.call("ZREM", KEYS[1], id)
end
return table.getn(ids)
