-- Real-world bug fixture `redis-returned-table-with-holes`: see manifest.toml beside this file.
local l = redis.call('get', KEYS[1])
local r = {}
local ks = redis.call('keys', ARGV[1])
for k, v in pairs(ks) do
  if v ~= l then
    r[k] = v
  end
end
return r
