-- Real-world bug fixture `vertx-rest-storage-cleanup-reuses-argv`: see manifest.toml beside this file.
-- the cleanup's own arguments
local resourcesPrefix = ARGV[1]
local collectionsPrefix = ARGV[2]
local expirableSet = ARGV[5]
local minscore = tonumber(ARGV[6])
local now = tonumber(ARGV[8])
local bulksize = tonumber(ARGV[9])

local counter = 0
local resourcesToClean = redis.call('zrangebyscore', expirableSet, minscore, now, 'limit', 0, bulksize)
for _, value in pairs(resourcesToClean) do
  local path = string.sub(value, string.len(resourcesPrefix) + 1)
  -- the delete script, pasted in, reads its own arguments from ARGV
  local lockPrefix = ARGV[8]
  local lockMode = ARGV[10]
  local lockKey = lockPrefix .. path
  if redis.call('exists', lockKey) == 1 then
    redis.call('hset', lockKey, 'mode', lockMode)
  end
  redis.call('del', resourcesPrefix .. path)
  redis.call('zrem', expirableSet, value)
  redis.call('srem', collectionsPrefix .. path, value)
  counter = counter + 1
end
return counter
