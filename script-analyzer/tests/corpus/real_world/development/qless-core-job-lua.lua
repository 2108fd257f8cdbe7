-- Real-world bug fixture `qless-core-job-lua`: see manifest.toml beside this file.
local QlessJob = {}
QlessJob.__index = QlessJob
QlessJob.ns = 'ql:j:'

function QlessJob:timeout(now)
  local queue_name, state, worker = unpack(redis.call('hmget',
    QlessJob.ns .. self.jid, 'queue', 'state', 'worker'))
  if queue_name == nil then
    error('Timeout(): Job ' .. self.jid .. ' does not exist')
  elseif state ~= 'running' then
    error('Timeout(): Job ' .. self.jid .. ' not running')
  end
  redis.call('hset', QlessJob.ns .. self.jid, 'state', 'timeout')
  redis.call('zadd', 'ql:w:' .. worker .. ':jobs', now, self.jid)
  return queue_name
end

function QlessJob:history(now, what, item)
  local count = tonumber(redis.call('get', 'ql:config:max-job-history')) or 100
  if count > 0 then
    local obj = redis.call('lpop', QlessJob.ns .. self.jid .. '-history')
    redis.call('ltrim', QlessJob.ns .. self.jid .. '-history', -count + 2, -1)
    if obj ~= nil then
      redis.call('lpush', QlessJob.ns .. self.jid .. '-history', obj)
    end
  end
  redis.call('rpush', QlessJob.ns .. self.jid .. '-history',
    cjson.encode({what = what, when = now, item = item}))
end

local job = setmetatable({jid = ARGV[2]}, QlessJob)
if ARGV[1] == 'timeout' then
  return job:timeout(tonumber(ARGV[3]))
end
job:history(tonumber(ARGV[3]), ARGV[4], ARGV[5])
return true
