-- Real-world bug fixture `kue-prefix-with-dash-in-pattern`: see manifest.toml beside this file.
local keys = redis.call('keys', KEYS[1] .. ':jobs:*:inactive')
for i, v in ipairs(keys) do
  local jt = string.match(v, KEYS[1] .. ':jobs:(.*):inactive')
  if jt then
    redis.call('sadd', KEYS[1] .. ':job:types', jt)
  end
end
return #keys
