-- Real-world bug fixture `redis-exporter-db-no-global`: see manifest.toml beside this file.
local result = {}
redis.call('SELECT', DB_NO)
local keys = redis.call('SCAN', 0, 'MATCH', ARGV[1], 'COUNT', 1000)
for _, key in ipairs(keys[2]) do
  table.insert(result, key)
  table.insert(result, redis.call('LLEN', key))
end
return result
