-- Real-world bug fixture `spring-rate-limit-argv-not-a-number`: see manifest.toml beside this file.
local key = "rate.limit:" .. KEYS[1]
local limit = tonumber(ARGV[1])
local expire_time = tonumber(ARGV[2])
local is_exists = redis.call("EXISTS", key)
if is_exists == 1 then
  local count = redis.call("INCR", key)
  if count > limit then
    return 0
  end
  return 1
end
redis.call("SET", key, 1)
redis.call("EXPIRE", key, expire_time)
return 1
