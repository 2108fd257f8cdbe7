-- Real-world bug fixture `go-redis-script-returns-false`: see manifest.toml beside this file.
local arg = KEYS[1]
if arg == "false" then
  return false
else
  return true
end
