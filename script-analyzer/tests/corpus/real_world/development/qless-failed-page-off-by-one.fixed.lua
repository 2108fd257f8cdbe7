-- Real-world bug fixture `qless-failed-page-off-by-one`: see manifest.toml beside this file.
if #KEYS > 0 then error('Failed(): No Keys should be provided') end

local group = ARGV[1]
local start = assert(tonumber(ARGV[2] or  0), 'Failed(): Arg "start" is not a number: ' .. (ARGV[2] or 'nil'))
local limit = assert(tonumber(ARGV[3] or 25), 'Failed(): Arg "limit" is not a number: ' .. (ARGV[3] or 'nil'))

if group then
	local response = {
		total = redis.call('llen', 'ql:f:' .. group),
		jobs  = {}
	}
	local jids = redis.call('lrange', 'ql:f:' .. group, start, limit - 1)
	for index, jid in ipairs(jids) do
		local job = redis.call(
		    'hmget', 'ql:j:' .. jid, 'jid', 'klass', 'state', 'queue', 'worker', 'priority',
			'expires', 'retries', 'remaining', 'data', 'tags', 'history', 'failure')
		
		table.insert(response.jobs, {
		    jid          = job[1],
			klass        = job[2],
		    state        = job[3],
		    queue        = job[4],
			worker       = job[5] or '',
			tracked      = redis.call('zscore', 'ql:tracked', jid) ~= false,
			priority     = tonumber(job[6]),
			expires      = tonumber(job[7]) or 0,
			retries      = tonumber(job[8]),
			remaining    = tonumber(job[9]),
			data         = cjson.decode(job[10]),
			tags         = cjson.decode(job[11]),
		    history      = cjson.decode(job[12]),
			failure      = cjson.decode(job[13] or '{}'),
			dependents   = redis.call('smembers', 'ql:j:' .. jid .. '-dependents'),
			dependencies = {}
		})
	end
	return cjson.encode(response)
else
	local response = {}
	local groups = redis.call('smembers', 'ql:failures')
	for index, group in ipairs(groups) do
		response[group] = redis.call('llen', 'ql:f:' .. group)
	end
	return cjson.encode(response)
end
