-- Real-world bug fixture `qless-cancel-returns-undefined-false`: see manifest.toml beside this file.
if #KEYS > 0 then error('Cancel(): No Keys should be provided') end

local jid    = assert(ARGV[1], 'Cancel(): Arg "jid" missing.')

local state, queue, failure, worker = unpack(redis.call('hmget', 'ql:j:' .. jid, 'state', 'queue', 'failure', 'worker'))

if state == 'complete' then
	return false
else
	if redis.call('scard', 'ql:j:' .. jid .. '-dependents') > 0 then
		error('Cancel(): ' .. jid .. ' has un-canceled jobs that depend on it')
	end

	if worker then
		redis.call('zrem', 'ql:w:' .. worker .. ':jobs', jid)
	end

	if queue then
		redis.call('zrem', 'ql:q:' .. queue .. '-work', jid)
		redis.call('zrem', 'ql:q:' .. queue .. '-locks', jid)
		redis.call('zrem', 'ql:q:' .. queue .. '-scheduled', jid)
	end

	for i, j in ipairs(redis.call('smembers', 'ql:j:' .. jid .. '-dependencies')) do
		redis.call('srem', 'ql:j:' .. j .. '-dependents', jid)
	end
	redis.call('del', 'ql:j:' .. jid .. '-dependencies')

	if state == 'failed' then
		failure = cjson.decode(failure)
		redis.call('lrem', 'ql:f:' .. failure.group, 0, jid)
	end

	redis.call('del', 'ql:j:' .. jid)
	return jid
end
