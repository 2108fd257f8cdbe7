local total = 0
for _, key in ipairs(KEYS) do
  total = total + tonumber(redis.call('GET', key) or '0')
end
return total
