//! Values sent to Redis: argument types, non-integers, expiries, numbers as text, Lua patterns.

use super::Class;
use redlua_analyzer::Lint;

pub(super) const CLASSES: &[Class] = &[
    Class {
        name: "a table, boolean or nil passed to redis.call",
        lint: Lint::ArgumentType,
        headers: &[],
        not_claimed: &[],
        cells: [
            (
                "local payload = {ARGV[1], ARGV[2]}
redis.call('SET', KEYS[1], payload) --<
return 1",
                "local payload = {ARGV[1], ARGV[2]}
redis.call('SET', KEYS[1], cjson.encode(payload))
return 1",
            ),
            (
                "local opts = {ttl = 10, keep = true}
redis.call('HSET', KEYS[1], 'keep', opts.keep) --<
return 1",
                "local opts = {ttl = 10, keep = '1'}
redis.call('HSET', KEYS[1], 'keep', opts.keep)
return 1",
            ),
            (
                "for _, name in ipairs(ARGV) do
  local seen = redis.call('SISMEMBER', KEYS[1], name) == 1
  redis.call('HSET', KEYS[2], name, seen) --<
end
return 1",
                "for _, name in ipairs(ARGV) do
  local seen = redis.call('SISMEMBER', KEYS[1], name) == 1
  redis.call('HSET', KEYS[2], name, seen and 1 or 0)
end
return 1",
            ),
            (
                "local missing
if ARGV[1] == 'clear' then
  missing = nil
end
redis.call('SET', KEYS[1], missing) --<
return 1",
                "local value
if ARGV[1] == 'clear' then
  value = ''
else
  value = ARGV[2]
end
redis.call('SET', KEYS[1], value)
return 1",
            ),
        ],
    },
    Class {
        name: "a computed non-integer reaching an integer parameter",
        lint: Lint::FractionalArgument,
        headers: &[],
        not_claimed: &[],
        cells: [
            (
                "local ttl = tonumber(ARGV[1]) / 1000
redis.call('EXPIRE', KEYS[1], ttl) --<
return 1",
                "local ttl = math.floor(tonumber(ARGV[1]) / 1000)
redis.call('EXPIRE', KEYS[1], ttl)
return 1",
            ),
            (
                "local cfg = {}
cfg.step = tonumber(ARGV[1]) * 1.5
return redis.call('INCRBY', KEYS[1], cfg.step) --<",
                "local cfg = {}
cfg.step = math.ceil(tonumber(ARGV[1]) * 1.5)
return redis.call('INCRBY', KEYS[1], cfg.step)",
            ),
            (
                "local count = 0
for _, key in ipairs(KEYS) do
  count = count + redis.call('SCARD', key)
end
local average = count / #KEYS
return redis.call('INCRBY', KEYS[1], average) --<",
                "local count = 0
for _, key in ipairs(KEYS) do
  count = count + redis.call('SCARD', key)
end
local average = math.floor(count / math.max(1, #KEYS))
return redis.call('INCRBY', KEYS[1], average)",
            ),
            (
                "local n = tonumber(ARGV[1])
if ARGV[2] == 'half' then
  n = n / 2
end
redis.call('PEXPIRE', KEYS[1], n) --<
return 1",
                "local n = tonumber(ARGV[1])
if ARGV[2] == 'half' then
  n = math.floor(n / 2)
end
redis.call('PEXPIRE', KEYS[1], n)
return 1",
            ),
        ],
    },
    Class {
        name: "string.format('%d') of a non-integer",
        lint: Lint::FractionalArgument,
        headers: &[],
        not_claimed: &[],
        cells: [
            (
                "local average = tonumber(ARGV[1]) / tonumber(ARGV[2])
return string.format('%d', average) --<",
                "local average = math.floor(tonumber(ARGV[1]) / math.max(1, tonumber(ARGV[2])))
return string.format('%d', average)",
            ),
            (
                "local stats = {}
stats.mean = redis.call('SCARD', KEYS[1]) / tonumber(ARGV[1])
return string.format('%d items', stats.mean) --<",
                "local stats = {}
stats.mean = redis.call('SCARD', KEYS[1]) / tonumber(ARGV[1])
return string.format('%.2f items', stats.mean)",
            ),
            (
                "for _, v in ipairs(ARGV) do
  local half = tonumber(v) * 0.5
  redis.call('RPUSH', KEYS[1], string.format('%d', half)) --<
end
return 1",
                "for _, v in ipairs(ARGV) do
  local half = math.floor(tonumber(v) * 0.5)
  redis.call('RPUSH', KEYS[1], string.format('%d', half))
end
return 1",
            ),
            (
                "local pct = 100
if ARGV[2] ~= '0' then
  pct = tonumber(ARGV[1]) * 100 / tonumber(ARGV[2])
end
return string.format('%d%%', pct) --<",
                "local pct = 100
if ARGV[2] ~= '0' then
  pct = math.floor(tonumber(ARGV[1]) * 100 / math.max(1, tonumber(ARGV[2])))
end
return string.format('%d%%', pct)",
            ),
        ],
    },
    Class {
        name: "an expiry that arithmetic can make 0 or negative",
        lint: Lint::InvalidExpire,
        headers: &[],
        not_claimed: &[],
        cells: [
            (
                "local ms = tonumber(ARGV[2])
local secs = math.floor(ms / 1000)
return redis.call('SET', KEYS[1], ARGV[1], 'EX', secs) --<",
                "local ms = tonumber(ARGV[2])
local secs = math.max(1, math.floor(ms / 1000))
return redis.call('SET', KEYS[1], ARGV[1], 'EX', secs)",
            ),
            (
                "local lease = {}
lease.deadline = tonumber(ARGV[2])
lease.now = tonumber(redis.call('TIME')[1])
return redis.call('SETEX', KEYS[1], lease.deadline - lease.now, ARGV[1]) --<",
                "local lease = {}
lease.deadline = tonumber(ARGV[2])
lease.now = tonumber(redis.call('TIME')[1])
local ttl = lease.deadline - lease.now
if ttl > 0 then
  return redis.call('SETEX', KEYS[1], ttl, ARGV[1])
end
return false",
            ),
            (
                "for _, key in ipairs(KEYS) do
  local ttl = redis.call('PTTL', key)
  redis.call('SET', key .. ':copy', ARGV[1], 'PX', ttl) --<
end
return 1",
                "for _, key in ipairs(KEYS) do
  local ttl = redis.call('PTTL', key)
  if ttl > 0 then
    redis.call('SET', key .. ':copy', ARGV[1], 'PX', ttl)
  end
end
return 1",
            ),
            (
                "local secs
if ARGV[2] == 'ms' then
  secs = math.floor(tonumber(ARGV[3]) / 1000)
else
  secs = tonumber(ARGV[3])
end
return redis.call('SET', KEYS[1], ARGV[1], 'EX', secs) --<",
                "local secs
if ARGV[2] == 'ms' then
  secs = math.max(1, math.floor(tonumber(ARGV[3]) / 1000))
else
  secs = tonumber(ARGV[3])
end
return redis.call('SET', KEYS[1], ARGV[1], 'EX', secs)",
            ),
        ],
    },
    Class {
        name: "a number past 1e14 turned into text",
        lint: Lint::NumberText,
        headers: &[],
        not_claimed: &[],
        cells: [
            (
                "local t = redis.call('TIME')
local micros = tonumber(t[1]) * 1000000 + tonumber(t[2])
return tostring(micros) --<",
                "local t = redis.call('TIME')
local millis = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return tostring(millis)",
            ),
            (
                "local t = redis.call('TIME')
local event = {}
event.ts = tonumber(t[1]) * 1000000 + tonumber(t[2])
return cjson.encode(event) --<",
                "local t = redis.call('TIME')
local event = {}
event.ts = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return cjson.encode(event)",
            ),
            (
                "local t = redis.call('TIME')
local base = tonumber(t[1]) * 1000000 + tonumber(t[2])
local out = ''
for i = 1, #ARGV do
  out = out .. (base + i) .. ',' --<
end
return out",
                "local t = redis.call('TIME')
local base = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = ''
for i = 1, #ARGV do
  out = out .. (base + i) .. ','
end
return out",
            ),
            (
                "local t = redis.call('TIME')
local stamp
if ARGV[1] == 'us' then
  stamp = tonumber(t[1]) * 1000000 + tonumber(t[2])
else
  stamp = tonumber(t[1]) * 1000000
end
return 'at:' .. stamp --<",
                "local t = redis.call('TIME')
local stamp
if ARGV[1] == 'us' then
  stamp = t[1] .. string.format('%06d', tonumber(t[2]))
else
  stamp = t[1] .. '000000'
end
return 'at:' .. stamp",
            ),
        ],
    },
    Class {
        name: "an integer past 2^53",
        lint: Lint::NumberText,
        headers: &[],
        not_claimed: &[],
        cells: [
            (
                "local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local id = ms * 4194304 --<
return redis.call('ZADD', KEYS[1], 0, ARGV[1] .. ':' .. math.floor(id / 4194304))",
                "local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local id = ms * 1024
return redis.call('ZADD', KEYS[1], 0, ARGV[1] .. ':' .. math.floor(id / 1024))",
            ),
            (
                "local ids = {}
ids.base = 18014398509481985 --<
return redis.call('SETNX', KEYS[1], string.format('%.0f', ids.base))",
                "local ids = {}
ids.base = '18014398509481985'
return redis.call('SETNX', KEYS[1], ids.base)",
            ),
            (
                "redis.call('SETNX', KEYS[1], '9007199254740993')
local last = 0
for _, member in ipairs(ARGV) do
  last = redis.call('INCR', KEYS[1]) --<
  redis.call('HSET', KEYS[2], member, last * 2)
end
return last",
                "redis.call('SETNX', KEYS[1], '1000')
local last = 0
for _, member in ipairs(ARGV) do
  last = redis.call('INCR', KEYS[1])
  redis.call('HSET', KEYS[2], member, last * 2)
end
return last",
            ),
            (
                "local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local id
if ARGV[1] == 'snowflake' then
  id = ms * 4194304 --<
else
  id = ms
end
return redis.call('SET', KEYS[1], string.format('%.0f', id))",
                "local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local id
if ARGV[1] == 'snowflake' then
  id = ms * 1024
else
  id = ms
end
return redis.call('SET', KEYS[1], string.format('%.0f', id))",
            ),
        ],
    },
    Class {
        name: "a Lua pattern built from input",
        lint: Lint::ArgvPattern,
        headers: &[],
        not_claimed: &[],
        cells: [
            (
                "local pattern = '^' .. ARGV[1]
local name = redis.call('GET', KEYS[1]) or ''
if string.match(name, pattern) then --<
  return 1
end
return 0",
                "local pattern = '^' .. string.gsub(ARGV[1], '%p', '%%%0')
local name = redis.call('GET', KEYS[1]) or ''
if string.match(name, pattern) then
  return 1
end
return 0",
            ),
            (
                "local q = {}
q.pattern = ARGV[1] .. '.*'
local name = redis.call('GET', KEYS[1]) or ''
local rest = string.gsub(name, q.pattern, '') --<
return rest",
                "local q = {}
q.pattern = string.gsub(ARGV[1], '%p', '%%%0') .. '.*'
local name = redis.call('GET', KEYS[1]) or ''
local rest = string.gsub(name, q.pattern, '')
return rest",
            ),
            (
                "local n = 0
for _, m in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if m:find('^' .. ARGV[1]) then --<
    n = n + 1
  end
end
return n",
                "local n = 0
for _, m in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if m:find(ARGV[1], 1, true) == 1 then
    n = n + 1
  end
end
return n",
            ),
            (
                "local pat
if ARGV[2] == 'prefix' then
  pat = '^' .. ARGV[1]
else
  pat = ARGV[1] .. '$'
end
local name = redis.call('GET', KEYS[1]) or ''
if string.find(name, pat) then --<
  return 1
end
return 0",
                "local pat
local escaped = string.gsub(ARGV[1], '%p', '%%%0')
if ARGV[2] == 'prefix' then
  pat = '^' .. escaped
else
  pat = escaped .. '$'
end
local name = redis.call('GET', KEYS[1]) or ''
if string.find(name, pat) then
  return 1
end
return 0",
            ),
        ],
    },
];
