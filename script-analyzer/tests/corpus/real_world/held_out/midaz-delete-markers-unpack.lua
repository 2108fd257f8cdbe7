-- Real-world bug fixture `midaz-delete-markers-unpack`: see manifest.toml beside this file.
local groupSize = 24
local deleteMarkerKeys = {}
for i = 1, #ARGV, groupSize do
  deleteMarkerKeys[#deleteMarkerKeys + 1] = ARGV[i] .. ":deleted"
end
if #deleteMarkerKeys > 0 and redis.call("EXISTS", unpack(deleteMarkerKeys)) > 0 then
  return redis.error_reply("0019")
end
return 0
