-- Real-world bug fixture `istio-redisquota-pexpire-fraction`, corrected as its report corrects it: see manifest.toml beside this file.
local meta_key = KEYS[1]
local dedup_key = KEYS[2]

local credit = tonumber(ARGV[1])
local window_ns = tonumber(ARGV[2])
local best_effort = tonumber(ARGV[4])
local wanted = tonumber(ARGV[5])
local now_ns = tonumber(ARGV[6])
local dedup_id = ARGV[7]

if (dedup_id or '') ~= '' then
  local prev_token = tonumber(redis.call("HGET", dedup_key, "token"))
  local prev_expire = tonumber(redis.call("HGET", dedup_key, "expire"))
  if prev_token and prev_expire and now_ns < prev_expire then
    return {prev_token, prev_expire - now_ns}
  end
end

local used = tonumber(redis.call("HGET", meta_key, "token"))
local expire_at = tonumber(redis.call("HGET", meta_key, "expire"))

if (not used or not expire_at) or (now_ns >= expire_at) then
  used = 0
  expire_at = window_ns + now_ns
  redis.call("HMSET", meta_key, "token", used, "expire", expire_at)
end

if used + wanted > credit then
  if best_effort == 1 and used < credit then
    local granted = credit - used
    redis.call("HMSET", meta_key, "token", credit)
    if (dedup_id or '') ~= '' then
      redis.call("HMSET", dedup_key, "token", granted, "expire", expire_at)
      redis.call("PEXPIRE", dedup_key, math.floor((expire_at - now_ns) / 1000000))
    end
    return {granted, expire_at - now_ns}
  end
  return {0, 0}
end

redis.call("HMSET", meta_key, "token", used + wanted)
if (dedup_id or '') ~= '' then
  redis.call("HMSET", dedup_key, "token", wanted, "expire", expire_at)
  redis.call("PEXPIRE", dedup_key, math.floor((expire_at - now_ns) / 1000000))
end
return {wanted, expire_at - now_ns}
