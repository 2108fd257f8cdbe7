-- Real-world bug fixture `autumn-lock-release-renamed-client`: see manifest.toml beside this file.
if miscRedis.call("GET", KEYS[1]) == ARGV[1] then
	return miscRedis.call("DEL", KEYS[1])
else
	return 0
end
