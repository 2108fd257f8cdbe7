-- Job queue: move the next waiting job to the active list and take a lock on
-- it (in the manner of BullMQ's moveToActive).
-- KEYS[1] wait list, KEYS[2] active list, KEYS[3] priority zset,
-- KEYS[4] events stream, KEYS[5] job key prefix ("<queue>:"),
-- KEYS[6] rate limiter key, KEYS[7] paused flag key
-- ARGV[1] worker token, ARGV[2] lock duration ms, ARGV[3] now (ms),
-- ARGV[4] JSON options {"limiter": {"max": n, "duration": ms}, "maxEvents": n}
local rcall = redis.call
local opts = cjson.decode(ARGV[4])

if rcall('EXISTS', KEYS[7]) == 1 then
    return {0, 'paused'}
end

local limiter = opts['limiter']
if limiter then
    local used = rcall('INCR', KEYS[6])
    if used == 1 then
        rcall('PEXPIRE', KEYS[6], limiter['duration'])
    end
    if used > tonumber(limiter['max']) then
        return {0, 'rate-limited', rcall('PTTL', KEYS[6])}
    end
end

local job_id = rcall('LMOVE', KEYS[1], KEYS[2], 'RIGHT', 'LEFT')
if not job_id then
    return {0, 'empty'}
end
rcall('ZREM', KEYS[3], job_id)

local job_key = KEYS[5] .. job_id
rcall('SET', job_key .. ':lock', ARGV[1], 'PX', ARGV[2])
rcall('HSET', job_key, 'processedOn', ARGV[3])
local attempts = rcall('HINCRBY', job_key, 'attemptsStarted', 1)

local max_events = opts['maxEvents'] or 10000
rcall('XADD', KEYS[4], 'MAXLEN', '~', max_events, '*', 'event', 'active', 'jobId', job_id,
    'prev', 'waiting')

local data = rcall('HGETALL', job_key)
return {1, job_id, attempts, data}
