-- Real-world bug fixture `juicefs-resolve-permission-bits-fraction`: see manifest.toml beside this file.
local function decode_attr(blob)
    local a = {}
    a.flags, a.mode, a.uid, a.gid = struct.unpack(">BHI4I4", string.sub(blob, 0, 11))
    a.kind = (a.mode / 4096) % 8
    a.mode = a.mode % 4096
    return a
end

local function load_attr(inode)
    local blob = redis.call('GET', "i" .. tostring(inode))
    if not blob then
        error("ENOENT")
    end
    return decode_attr(blob)
end

local function child_of(dir, name)
    local entry = redis.call('HGET', "d" .. tostring(dir), name)
    if not entry then
        error("ENOENT")
    end
    return struct.unpack(">BI8", entry)
end

local function may_enter(inode, uid, gid)
    if uid == 0 then
        return true
    end
    local attr = load_attr(inode)
    local bits = 0
    if attr.uid == uid then
        bits = (attr.mode / 64) % 8
    elseif attr.gid == gid then
        bits = (attr.mode / 8) % 8
    else
        bits = attr.mode % 8
    end
    return bits % 2 == 1
end

local function walk(dir, path, uid, gid)
    local kind = 2
    for name in string.gmatch(path, "[^/]+") do
        if kind == 3 then
            error("ENOTSUP")
        elseif kind ~= 2 then
            error("ENOTDIR")
        elseif dir > 1 and not may_enter(dir, uid, gid) then
            error("EACCESS")
        end
        kind, dir = child_of(dir, name)
    end
    return {dir, redis.call('GET', "i" .. tostring(dir))}
end

return walk(tonumber(KEYS[1]), KEYS[2], tonumber(KEYS[3]), tonumber(KEYS[4]))
