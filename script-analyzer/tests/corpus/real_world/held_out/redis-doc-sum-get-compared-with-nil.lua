-- Real-world bug fixture `redis-doc-sum-get-compared-with-nil`: see manifest.toml beside this file.
local sum = 0
local k
local v
for k, v in pairs(KEYS) do
  local counter_value = redis.call('get', v)
  if (counter_value ~= nil) then
    sum = sum + tonumber(counter_value)
  end
end
return sum
