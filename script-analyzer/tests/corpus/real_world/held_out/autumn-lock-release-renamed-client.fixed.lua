-- Real-world bug fixture `autumn-lock-release-renamed-client`, corrected as its report corrects it: see manifest.toml beside this file.
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
else
	return 0
end
