-- Real-world bug fixture `trpc-agent-go-trim-zrem-unpack`, corrected as its report corrects it: see manifest.toml beside this file.
local eventKey = KEYS[1]
local sessionStateKey = KEYS[2]
local sessionID = ARGV[1]

if #ARGV <= 1 then return 0 end
local removed = 0
local chunk = {}
for i = 2, #ARGV do
    table.insert(chunk, ARGV[i])
    if #chunk == 512 then
        removed = removed + redis.call('ZREM', eventKey, unpack(chunk))
        chunk = {}
    end
end
if #chunk > 0 then
    removed = removed + redis.call('ZREM', eventKey, unpack(chunk))
end
if removed == 0 or redis.call('HEXISTS', sessionStateKey, sessionID) == 0 then
    return removed
end
return removed
