-- Declared read-only, but writes: the server must refuse it under EVALSHA_RO.
return redis.call('SET', KEYS[1], 'written')
