-- Real-world bug fixture `qless-retry-failure-compared-with-table`: see manifest.toml beside this file.
local QlessJob = {}
QlessJob.__index = QlessJob
QlessJob.ns = 'ql:j:'

function QlessJob:retry(now, queue, worker)
    local oldqueue, state, oldworker, failure = unpack(redis.call('hmget',
        QlessJob.ns .. self.jid, 'queue', 'state', 'worker', 'failure'))
    if oldworker == false then
        error('Retry(): Job does not exist')
    elseif oldworker ~= worker then
        error('Retry(): Job has been handed out to another worker: ' .. oldworker)
    end

    local remaining = tonumber(redis.call(
        'hincrby', QlessJob.ns .. self.jid, 'remaining', -1))
    redis.call('zrem', 'ql:w:' .. worker .. ':jobs', self.jid)

    if remaining < 0 then
        local group = 'failed-retries-' .. queue
        redis.call('hmset', QlessJob.ns .. self.jid, 'state', 'failed',
            'worker', '', 'expires', '')
        -- If the failure has not already been set, then set it
        if failure == {} then
            redis.call('hset', QlessJob.ns .. self.jid,
            'failure', cjson.encode({
                ['group']   = group,
                ['message'] = 'Job exhausted retries in queue "' .. oldqueue .. '"',
                ['when']    = now,
                ['worker']  = worker
            }))
        end
        redis.call('sadd', 'ql:failures', group)
        redis.call('lpush', 'ql:f:' .. group, self.jid)
    end
    return remaining
end

local job = setmetatable({jid = ARGV[1]}, QlessJob)
return job:retry(tonumber(ARGV[2]), ARGV[3], ARGV[4])
