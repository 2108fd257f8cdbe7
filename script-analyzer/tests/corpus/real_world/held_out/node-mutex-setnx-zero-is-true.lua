-- Real-world bug fixture `node-mutex-setnx-zero-is-true`: see manifest.toml beside this file.
local locked = redis.call('SETNX', KEYS[1], ARGV[1]);
if locked then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end;
return locked
