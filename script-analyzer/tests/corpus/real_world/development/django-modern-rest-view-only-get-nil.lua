-- Real-world bug fixture `django-modern-rest-view-only-get-nil`: see manifest.toml beside this file.
local key = KEYS[1]
local max_requests = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local view_only = tonumber(ARGV[3])
local current = 0
if view_only == 0 then
  current = redis.call("INCR", key)
  if current == 1 then
    redis.call("EXPIRE", key, window)
  end
else
  current = tonumber(redis.call("GET", key))
end
local ttl = redis.call("TTL", key)
if current > max_requests then
  return {0, max_requests, ttl}
end
return {1, current, ttl}
