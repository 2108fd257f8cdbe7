
                local curr = tonumber(redis.call('get', KEYS[1]))
                local next = tonumber(ARGV[1])
                if curr == nil or curr < next then
                    redis.call('set', KEYS[1], next)
                    return next
                else
                    return nil
                end
            
