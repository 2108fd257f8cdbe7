-- Bug: cjson.null used as a condition. A JSON null decodes to `cjson.null`,
-- a value that is true in Lua: a job whose parent is null is treated as
-- having one.
-- Reported: class of bug (lua-cjson documents null as the `cjson.null`
-- sentinel).
-- declared: keys=1 args=1
-- expect: cjson_null_condition 9
local job = cjson.decode(ARGV[1])
if job.parent then
  redis.call('SADD', KEYS[1], job.parent)
end
return 1
