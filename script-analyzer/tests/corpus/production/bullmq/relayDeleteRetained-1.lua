--[[
  Deletes the retained message of a topic.
  Input:
    KEYS[1] nodes key ({base}:nodes)
    ARGV[1] base key
    ARGV[2] topic
  Output:
    1 - Deleted.
    0 - The topic had no retained message.
   -1 - Invalid topic.
]]
local rcall = redis.call
--[[
  Keeps every key of a relay namespace expiring on its own, so a namespace
  whose nodes all vanish leaves nothing behind, even if no other node ever
  sweeps it:
    - node records and inboxes expire with their node's lease;
    - routing keys (nodes, started, subs, cleanup) with the longest lease;
    - :mid and :layout with the longest lease or the last retained message,
      whichever ends later;
    - retained messages and their index with their own expiry.
  Called after every change to the node set or to retained messages.
]]
--[[
  Time helpers shared by the relay scripts. Scripts use the server clock, so
  leases and expiries don't depend on the clocks of the nodes.
]]
local function getRelayTime()
  local time = rcall("TIME")
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
-- Highest score of a sorted set (0 if empty): the latest lease or expiry.
local function getRelayLastScore(key)
  local last = rcall("ZRANGE", key, -1, -1, "WITHSCORES")
  return last[2] and tonumber(last[2]) or 0
end
local function refreshRelayNamespace(baseKey, nodesKey, now)
  local nodesUntil = getRelayLastScore(nodesKey)
  local routingKeys = { nodesKey, baseKey .. ":started", baseKey .. ":subs",
    baseKey .. ":cleanup" }
  if nodesUntil > now then
    for i = 1, #routingKeys do
      rcall("PEXPIREAT", routingKeys[i], nodesUntil)
    end
  else
    -- No live node: every subscription left belongs to a dead one.
    rcall("UNLINK", unpack(routingKeys))
  end
  local keepUntil = math.max(nodesUntil,
    getRelayLastScore(baseKey .. ":retained"))
  if keepUntil > now then
    rcall("PEXPIREAT", baseKey .. ":mid", keepUntil)
    rcall("PEXPIREAT", baseKey .. ":layout", keepUntil)
  else
    rcall("UNLINK", baseKey .. ":mid", baseKey .. ":layout")
  end
end
--[[
  Relay topic grammar, shared by every relay script.
  Topics are dot-separated keypaths, e.g. "queues.emails.jobs.42.progress".
    - Segments match [A-Za-z0-9_:%-]+ (other characters must be
      percent-encoded by the caller).
    - Max 512 characters and 16 segments.
  Patterns may also contain wildcards:
    - "*" matches exactly one segment.
    - ">" matches one or more trailing segments (last segment only).
  Node and endpoint ids match [A-Za-z0-9_-]{1,64}.
]]
local function splitRelayTopic(value)
  local segments = {}
  local start = 1
  while true do
    local dot = string.find(value, ".", start, true)
    if not dot then
      segments[#segments + 1] = string.sub(value, start)
      return segments
    end
    segments[#segments + 1] = string.sub(value, start, dot - 1)
    start = dot + 1
  end
end
-- Returns the segments of a valid topic (or pattern), or nil if invalid.
local function parseRelayTopic(value, allowWildcards)
  if type(value) ~= "string" or #value == 0 or #value > 512 then
    return nil
  end
  local segments = splitRelayTopic(value)
  local count = #segments
  if count > 16 then
    return nil
  end
  for i = 1, count do
    local segment = segments[i]
    if allowWildcards and segment == "*" then
      -- valid
    elseif allowWildcards and segment == ">" then
      if i ~= count then
        return nil
      end
    elseif not string.match(segment, "^[%w_:%%%-]+$") then
      return nil
    end
  end
  return segments
end
local function matchRelayTopic(patternSegments, topicSegments)
  local topicCount = #topicSegments
  for i = 1, #patternSegments do
    local segment = patternSegments[i]
    if segment == ">" then
      return topicCount >= i
    end
    if i > topicCount then
      return false
    end
    if segment ~= "*" and segment ~= topicSegments[i] then
      return false
    end
  end
  return #patternSegments == topicCount
end
-- Index bucket of a pattern: its literal root, or "*" for wildcard roots.
local function getRelayPatternRoot(patternSegments)
  local root = patternSegments[1]
  if root == "*" or root == ">" then
    return "*"
  end
  return root
end
local function hasRelayWildcards(segments)
  for i = 1, #segments do
    if segments[i] == "*" or segments[i] == ">" then
      return true
    end
  end
  return false
end
local function isValidRelayId(id)
  return type(id) == "string" and #id > 0 and #id <= 64 and
    string.match(id, "^[%w_%-]+$") ~= nil
end
local baseKey = ARGV[1]
local topic = ARGV[2]
if not parseRelayTopic(topic, false) then
  return -1
end
local now = getRelayTime()
local indexKey = baseKey .. ":retained"
rcall("ZREM", indexKey, topic)
rcall("ZREMRANGEBYSCORE", indexKey, "-inf", now)
-- The deleted topic may have been the longest lived: the index and the
-- namespace now expire with the remaining retained messages.
local indexUntil = getRelayLastScore(indexKey)
if indexUntil > 0 then
  rcall("PEXPIREAT", indexKey, indexUntil)
end
local deleted = rcall("DEL", baseKey .. ":" .. topic .. ":ret")
refreshRelayNamespace(baseKey, KEYS[1], now)
return deleted
