-- Fixed-window rate limiter.
-- KEYS[1]: counter of the current window.
-- ARGV[1]: requests allowed per window; ARGV[2]: window length in seconds.
-- Returns {allowed (1 or 0), requests left, seconds until the window resets}.
local count = redis.call('INCR', KEYS[1])
if count == 1 then
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
local ttl = redis.call('TTL', KEYS[1])
local limit = tonumber(ARGV[1])
if count > limit then
  return {0, 0, ttl}
end
return {1, limit - count, ttl}
