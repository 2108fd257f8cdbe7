
    local bucket = KEYS[1]
    local now = ARGV[1]
    local space_required = tonumber(ARGV[2])
    local item_name = ARGV[3]
    local rates_count = tonumber(ARGV[4])

    -- Per rate the client supplies (window_start, limit, blocking_rank); the
    -- window bounds and rank come from the algorithm, so this script stays
    -- policy-agnostic. blocking_rank < 0 means "resolve no entry".
    for i=1,rates_count do
        local offset = (i - 1) * 3
        local window_start = tonumber(ARGV[5 + offset])
        local limit = tonumber(ARGV[5 + offset + 1])
        local blocking_rank = tonumber(ARGV[5 + offset + 2])
        local count = redis.call('ZCOUNT', bucket, window_start, now)
        local space_available = limit - tonumber(count)
        if space_available < space_required then
            local blocking_timestamp = -1

            if blocking_rank >= 0 then
                local blocking = redis.call('ZRANGE', bucket, -1 - blocking_rank, -1 - blocking_rank, 'WITHSCORES')
                if blocking[2] then
                    blocking_timestamp = tonumber(blocking[2])
                end
            end

            return {i - 1, blocking_timestamp}
        end
    end

    local batch = {}
    -- Each member adds two unpacked arguments; 1000 stays below Lua 5.1 limits.
    local batch_size = 1000

    for i=1,space_required do
        batch[#batch + 1] = now
        batch[#batch + 1] = item_name..i

        if #batch == batch_size * 2 then
            redis.call('ZADD', bucket, unpack(batch))
            batch = {}
        end
    end

    if #batch > 0 then
        redis.call('ZADD', bucket, unpack(batch))
    end

    return {-1, -1}
    
