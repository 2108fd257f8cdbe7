-- Real-world bug fixture `asynq-memory-usage-missing-key`: see manifest.toml beside this file.
local sample_size = tonumber(ARGV[2])
local memusg = 0
local ids = redis.call("LRANGE", KEYS[1], 0, sample_size - 1)
local sample_total = 0
if (table.getn(ids) > 0) then
  for _, id in ipairs(ids) do
    local bytes = redis.call("MEMORY", "USAGE", ARGV[1] .. id)
    sample_total = sample_total + bytes
  end
  local n = redis.call("LLEN", KEYS[1])
  local avg = sample_total / table.getn(ids)
  memusg = memusg + (avg * n)
end
return memusg
