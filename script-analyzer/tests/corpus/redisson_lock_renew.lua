-- Watchdog: renew a batch of leases in one call.
-- KEYS: lock names. ARGV[1] lease ms, then ARGV[i + 1] the owner of KEYS[i].
-- Returns one 1 (renewed) or 0 (lost) per key.
local lease = ARGV[1]
local result = {}
for i = 1, #KEYS do
    local name = KEYS[i]
    local owner = ARGV[i + 1]
    if redis.call('hexists', name, owner) == 1 then
        redis.call('pexpire', name, lease)
        table.insert(result, 1)
    else
        table.insert(result, 0)
    end
end
return result
