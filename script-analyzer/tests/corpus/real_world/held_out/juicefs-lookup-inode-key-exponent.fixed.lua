-- Real-world bug fixture `juicefs-lookup-inode-key-exponent`, corrected as its report corrects it: see manifest.toml beside this file.
local entry = redis.call('HGET', KEYS[1], KEYS[2])
if not entry then
    error("ENOENT")
end
local inode = struct.unpack(">I8", string.sub(entry, 2))
if inode > 4503599627370495 then
    error("ENOTSUP")
end
return {inode, redis.call('GET', "i" .. string.format("%.f", inode))}
