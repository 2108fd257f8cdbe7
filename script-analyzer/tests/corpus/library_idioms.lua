-- Library idioms the type-aware lints must accept: plain searches for a
-- caller's text, escaped patterns, JSON with an explicit empty list,
-- members moved in batches, fractions rounded on purpose, error and status
-- tables returned as such.
-- KEYS[1] a set of tags, KEYS[2] its archive, KEYS[3] a JSON document
-- ARGV[1] a prefix to look for (plain text), ARGV[2] a window in ms
local prefix = ARGV[1]
local window_ms = tonumber(ARGV[2])
if not window_ms then
  return redis.error_reply('window must be a number')
end

redis.call('SADD', KEYS[1], 'a.b', 'a-b', 'c')
local matched = {}
for _, tag in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if string.find(tag, prefix, 1, true) == 1 then
    matched[#matched + 1] = tag
  end
end
table.sort(matched)

-- An escaped copy of the input may be used as a pattern.
local escaped = prefix:gsub('%p', '%%%0')
local count = 0
for _, tag in ipairs(matched) do
  if tag:match('^' .. escaped) then
    count = count + 1
  end
end

-- Moved in batches, never with an empty argument list.
local members = redis.call('SMEMBERS', KEYS[1])
for i = 1, #members, 100 do
  local last = math.min(i + 99, #members)
  redis.call('SADD', KEYS[2], unpack(members, i, last))
end

-- JSON: an empty list is written as text, a filled one encoded.
local json
if #matched == 0 then
  json = '[]'
else
  json = cjson.encode(matched)
end
redis.call('SET', KEYS[3], json, 'PX', math.floor(window_ms))

local seconds = math.floor(window_ms / 1000)
if count > #members then
  return {err = 'impossible count'}
end
return {count, seconds, json}
