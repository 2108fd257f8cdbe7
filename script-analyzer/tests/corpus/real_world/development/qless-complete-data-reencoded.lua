-- Real-world bug fixture `qless-complete-data-reencoded`: see manifest.toml beside this file.
local QlessJob = {}
QlessJob.__index = QlessJob
QlessJob.ns = 'ql:j:'

function QlessJob:complete(now, worker, queue, data, ...)
  assert(worker, 'Complete(): Arg "worker" missing')
  assert(queue , 'Complete(): Arg "queue" missing')
  data = assert(cjson.decode(data),
    'Complete(): Arg "data" missing or not JSON: ' .. tostring(data))

  local lastworker, state = unpack(
    redis.call('hmget', QlessJob.ns .. self.jid, 'worker', 'state'))
  if lastworker == false then
    error('Complete(): Job does not exist')
  elseif lastworker ~= worker then
    error('Complete(): Job has been handed out to another worker: ' ..
      tostring(lastworker))
  end

  if data then
    redis.call('hset', QlessJob.ns .. self.jid, 'data', cjson.encode(data))
  end

  redis.call('hmset', QlessJob.ns .. self.jid, 'state', 'complete',
    'worker', '', 'completed', now)
  return 'complete'
end

local job = setmetatable({jid = ARGV[1]}, QlessJob)
return job:complete(tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5])
