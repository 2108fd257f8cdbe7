-- Redlock-style unlock: delete the key only if it still holds our token.
-- KEYS[1] lock key, ARGV[1] our random token
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('DEL', KEYS[1])
else
    return 0
end
