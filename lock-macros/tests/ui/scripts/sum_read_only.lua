#!lua flags=no-writes
-- Sums the counters KEYS[2..], adding ARGV[2..] as weights, scaled by ARGV[1].
local total = 0
for i = 2, #KEYS do
  local weight = tonumber(ARGV[i] or '1')
  total = total + weight * tonumber(redis.call('GET', KEYS[i]) or '0')
end
local scale = tonumber(ARGV[1])
return redis.call('EXISTS', KEYS[1]) + total * scale
