#!lua flags=no-writes,allow-key-locking
return redis.call('GET', KEYS[1])
