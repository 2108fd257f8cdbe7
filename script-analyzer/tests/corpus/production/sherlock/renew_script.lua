
    local result = 0
    if redis.call('GET', KEYS[1]) == ARGV[1] then
        if ARGV[2] ~= -1 then
            redis.call('EXPIRE', KEYS[1], ARGV[2])
        else
            redis.call('PERSIST', KEYS[1])
        end
        result = 1
    end
    return result
    
