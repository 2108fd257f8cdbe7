-- Real-world bug fixture `qless-peek-zero-count-reads-whole-queue`: see manifest.toml beside this file.
local QlessQueue = {}
QlessQueue.__index = QlessQueue

function QlessQueue:prefix(group)
    return 'ql:q:' .. self.name .. '-' .. group
end

local function queue_named(name)
    local queue = setmetatable({name = name}, QlessQueue)
    queue.work = {
        peek = function(count)
            local jids = {}
            for index, jid in ipairs(redis.call(
                'zrevrange', queue:prefix('work'), 0, count - 1)) do
                table.insert(jids, jid)
            end
            return jids
        end
    }
    queue.locks = {
        expired = function(now, offset, count)
            return redis.call('zrangebyscore',
                queue:prefix('locks'), 0, now, 'LIMIT', offset, count)
        end
    }
    return queue
end

function QlessQueue:peek(now, count)
    count = assert(tonumber(count),
        'Peek(): Arg "count" missing or not a number: ' .. tostring(count))
    local jids = self.locks.expired(now, 0, count)
    for _, jid in ipairs(self.work.peek(count - #jids)) do
        table.insert(jids, jid)
    end
    return jids
end

return queue_named(ARGV[1]):peek(tonumber(ARGV[2]), ARGV[3])
