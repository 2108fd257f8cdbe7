--[[
  Renews a relay node's liveness lease (and the expiry of its namespace).
  Input:
    KEYS[1] nodes key ({base}:nodes)
    ARGV[1] base key
    ARGV[2] node id
    ARGV[3] lease duration (ms)
  Output:
    1 - Lease renewed.
    0 - The node is not registered or its lease expired (even if not swept):
        the caller must register again and restore its subscriptions.
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
local baseKey = ARGV[1]
local nodeId = ARGV[2]
local leaseMs = tonumber(ARGV[3])
local nodeKey = baseKey .. ":" .. nodeId .. ":node"
if not rcall("ZSCORE", KEYS[1], nodeId) or rcall("EXISTS", nodeKey) == 0 then
  return 0
end
local now = getRelayTime()
rcall("ZADD", KEYS[1], now + leaseMs, nodeId)
rcall("HSET", nodeKey, "hb", now)
rcall("PEXPIRE", nodeKey, leaseMs)
rcall("PEXPIRE", baseKey .. ":" .. nodeId .. ":inbox", leaseMs)
refreshRelayNamespace(baseKey, KEYS[1], now)
return 1
