-- Real-world bug fixture `juicefs-lookup-inode-key-exponent`: see manifest.toml beside this file.
local entry = redis.call('HGET', KEYS[1], KEYS[2])
if not entry then
    return false
end
local inode = struct.unpack(">I8", string.sub(entry, 2))
return {inode, redis.call('GET', "i" .. tostring(inode))}
