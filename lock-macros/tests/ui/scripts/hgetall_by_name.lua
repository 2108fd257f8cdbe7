local job = redis.call('HGETALL', KEYS[1])
return job.state
