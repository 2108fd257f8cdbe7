-- Real-world bug fixture `qless-modifies-table-library`: see manifest.toml beside this file.
function table.extend(self, other)
  for i, v in ipairs(other) do
    table.insert(self, v)
  end
end
local workers = redis.call('zrangebyscore', KEYS[1], 0, ARGV[1])
local all = {}
table.extend(all, workers)
return all
