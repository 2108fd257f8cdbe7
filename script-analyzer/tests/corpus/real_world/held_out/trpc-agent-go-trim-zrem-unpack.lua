-- Real-world bug fixture `trpc-agent-go-trim-zrem-unpack`: see manifest.toml beside this file.
local eventKey = KEYS[1]
local sessionStateKey = KEYS[2]
local sessionID = ARGV[1]

if #ARGV <= 1 then return 0 end
local members = {}
for i = 2, #ARGV do table.insert(members, ARGV[i]) end
local removed = redis.call('ZREM', eventKey, unpack(members))
if removed == 0 or redis.call('HEXISTS', sessionStateKey, sessionID) == 0 then
    return removed
end
return removed
