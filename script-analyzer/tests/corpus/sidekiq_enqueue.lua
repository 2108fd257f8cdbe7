-- Enqueue jobs, Sidekiq/Resque style: register the queue, push the payloads.
-- KEYS[1] the set of queue names, KEYS[2] the queue list, KEYS[3] stats hash
-- ARGV[1] queue name, ARGV[2..] JSON job payloads
local queue = ARGV[1]
redis.call('SADD', KEYS[1], queue)
local pushed = 0
for i = 2, #ARGV do
    local job = cjson.decode(ARGV[i])
    if type(job) ~= 'table' or job['class'] == nil then
        return redis.error_reply('ERR job ' .. (i - 1) .. ' has no class')
    end
    job['enqueued_at'] = job['enqueued_at'] or job['created_at']
    redis.call('LPUSH', KEYS[2], cjson.encode(job))
    pushed = pushed + 1
end
redis.call('HINCRBY', KEYS[3], 'enqueued:' .. queue, pushed)
return pushed
