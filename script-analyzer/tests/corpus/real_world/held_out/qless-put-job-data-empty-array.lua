-- Real-world bug fixture `qless-put-job-data-empty-array`: see manifest.toml beside this file.
local jid = assert(ARGV[1], 'Put(): Arg "jid" missing')
local klass = assert(ARGV[2], 'Put(): Arg "klass" missing')
local data = assert(cjson.decode(ARGV[3]), 'Put(): Arg "data" missing or not JSON: ' .. tostring(ARGV[3]))
local now = assert(tonumber(ARGV[4]), 'Put(): Arg "now" missing or not a number: ' .. tostring(ARGV[4]))

redis.call('hmset', KEYS[1],
  'jid', jid,
  'klass', klass,
  'data', cjson.encode(data),
  'state', 'waiting',
  'put', now)

return jid
