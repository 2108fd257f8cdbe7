
    local result = 0
    if redis.call('GET', KEYS[1]) == ARGV[1] then
        redis.call('DEL', KEYS[1])
        result = 1
    end
    return result
    
