-- Real-world bug fixture `redis-gcra-ex-given-milliseconds`: see manifest.toml beside this file.
local rate_limit_key = KEYS[1]
local now = tonumber(ARGV[1])
local emission_interval = tonumber(ARGV[2])
local burst_offset = tonumber(ARGV[3])
local tat = redis.call("GET", rate_limit_key)
if not tat then
  tat = now
else
  tat = tonumber(tat)
end
tat = math.max(tat, now)
local new_tat = tat + emission_interval
local reset_in = math.ceil(new_tat - now)
redis.call("SET", rate_limit_key, new_tat, "EX", reset_in)
return {1, reset_in}
