//! What a script returns: shapes, non-integers, false, and cjson with empty tables.

use super::Class;
use redlua_analyzer::Lint;

pub(super) const CLASSES: &[Class] = &[
    Class {
        name: "return: a table with string keys",
        lint: Lint::ReturnShape,
        headers: &["-- redlua: returns=array"],
        not_claimed: &[],
        cells: [
            (
                "local info = {owner = ARGV[1], ttl = redis.call('PTTL', KEYS[1])}
return info --<",
                "local info = {ARGV[1], redis.call('PTTL', KEYS[1])}
return info",
            ),
            (
                "local r = {}
r.count = redis.call('SCARD', KEYS[1])
return r --<",
                "local r = {}
r[1] = redis.call('SCARD', KEYS[1])
return r",
            ),
            (
                "local out = {}
for _, key in ipairs(KEYS) do
  out[key] = redis.call('GET', key)
end
return out --<",
                "local out = {}
for _, key in ipairs(KEYS) do
  out[#out + 1] = redis.call('GET', key)
end
return out",
            ),
            (
                "local res
if redis.call('EXISTS', KEYS[1]) == 1 then
  res = {ok = 1}
else
  res = {0}
end
return res --<",
                "local res
if redis.call('EXISTS', KEYS[1]) == 1 then
  res = {1}
else
  res = {0}
end
return res",
            ),
        ],
    },
    Class {
        name: "return: an array cut at a nil element",
        lint: Lint::ReturnShape,
        headers: &["-- redlua: returns=array"],
        not_claimed: &[],
        cells: [
            (
                "local limit = tonumber(ARGV[2])
local n = redis.call('INCR', KEYS[1])
return {n, limit, 'ok'} --<",
                "local limit = tonumber(ARGV[2]) or 0
local n = redis.call('INCR', KEYS[1])
return {n, limit, 'ok'}",
            ),
            (
                "local s = {}
s.limit = tonumber(ARGV[1])
return {redis.call('INCR', KEYS[1]), s.limit, 'ok'} --<",
                "local s = {}
s.limit = tonumber(ARGV[1]) or 0
return {redis.call('INCR', KEYS[1]), s.limit, 'ok'}",
            ),
            (
                "local last
for _, v in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  last = v
end
return {redis.call('LLEN', KEYS[1]), last, 'done'} --<",
                "local last = ''
for _, v in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  last = v
end
return {redis.call('LLEN', KEYS[1]), last, 'done'}",
            ),
            (
                "local n = redis.call('INCR', KEYS[1])
local reason
if n > tonumber(ARGV[1]) then
  reason = 'full'
end
return {n, reason, 'done'} --<",
                "local n = redis.call('INCR', KEYS[1])
local reason = 'ok'
if n > tonumber(ARGV[1]) then
  reason = 'full'
end
return {n, reason, 'done'}",
            ),
        ],
    },
    Class {
        name: "return: a computed non-integer",
        lint: Lint::NonIntegerReturn,
        headers: &["-- redlua: returns=integer"],
        not_claimed: &[],
        cells: [
            (
                "local total = redis.call('SCARD', KEYS[1])
local ratio = total / tonumber(ARGV[1])
return ratio --<",
                "local total = redis.call('SCARD', KEYS[1])
local ratio = math.floor(total / math.max(1, tonumber(ARGV[1])))
return ratio",
            ),
            (
                "local stats = {}
stats.rate = redis.call('GET', KEYS[1]) / tonumber(ARGV[1])
return stats.rate --<",
                "local stats = {}
stats.rate = math.floor(redis.call('GET', KEYS[1]) / math.max(1, tonumber(ARGV[1])))
return stats.rate",
            ),
            (
                "local sum = 0
for _, key in ipairs(KEYS) do
  sum = sum + redis.call('SCARD', key)
end
return sum / #KEYS --<",
                "local sum = 0
for _, key in ipairs(KEYS) do
  sum = sum + redis.call('SCARD', key)
end
return math.floor(sum / math.max(1, #KEYS))",
            ),
            (
                "local score = redis.call('ZCARD', KEYS[1])
if ARGV[1] == 'half' then
  score = score * 0.5
end
return score --<",
                "local score = redis.call('ZCARD', KEYS[1])
if ARGV[1] == 'half' then
  score = math.floor(score * 0.5)
end
return score",
            ),
        ],
    },
    Class {
        name: "return: false, which arrives as nil",
        lint: Lint::NilReturn,
        headers: &["-- redlua: returns=integer"],
        not_claimed: &[],
        cells: [
            (
                "local acquired = redis.call('EXISTS', KEYS[1]) == 0
if acquired then
  redis.call('SET', KEYS[1], ARGV[1])
end
return acquired --<",
                "local acquired = redis.call('EXISTS', KEYS[1]) == 0
if acquired then
  redis.call('SET', KEYS[1], ARGV[1])
end
return acquired and 1 or 0",
            ),
            (
                "local state = {}
state.held = redis.call('GET', KEYS[1]) == ARGV[1]
return state.held --<",
                "local state = {}
state.held = redis.call('GET', KEYS[1]) == ARGV[1]
return state.held and 1 or 0",
            ),
            (
                "local found = false
for _, m in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if m == ARGV[1] then
    found = true
  end
end
return found --<",
                "local found = 0
for _, m in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if m == ARGV[1] then
    found = 1
  end
end
return found",
            ),
            (
                "if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return false --<
end
redis.call('DEL', KEYS[1])
return 1",
                "if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
return 1",
            ),
        ],
    },
    Class {
        name: "cjson.encode of a table that may be empty",
        lint: Lint::CjsonEmptyTable,
        headers: &[],
        not_claimed: &[],
        cells: [
            (
                "local members = redis.call('SMEMBERS', KEYS[1])
return cjson.encode(members) --<",
                "local members = redis.call('SMEMBERS', KEYS[1])
if #members == 0 then
  return '[]'
end
return cjson.encode(members)",
            ),
            (
                "local page = {}
page.items = redis.call('LRANGE', KEYS[1], 0, 9)
return cjson.encode(page.items) --<",
                "local page = {}
page.items = redis.call('LRANGE', KEYS[1], 0, 9)
if #page.items == 0 then
  return '[]'
end
return cjson.encode(page.items)",
            ),
            (
                "local out = {}
for _, key in ipairs(KEYS) do
  local v = redis.call('GET', key)
  if v then
    out[#out + 1] = v
  end
end
return cjson.encode(out) --<",
                "local out = {}
for _, key in ipairs(KEYS) do
  local v = redis.call('GET', key)
  if v then
    out[#out + 1] = v
  end
end
if #out == 0 then
  return '[]'
end
return cjson.encode(out)",
            ),
            (
                "local list = {}
if ARGV[1] == 'all' then
  list = redis.call('LRANGE', KEYS[1], 0, -1)
end
return cjson.encode(list) --<",
                "local list = {}
if ARGV[1] == 'all' then
  list = redis.call('LRANGE', KEYS[1], 0, -1)
end
if #list == 0 then
  return '[]'
end
return cjson.encode(list)",
            ),
        ],
    },
    Class {
        name: "a decoded document encoded again (`[]` comes back `{}`)",
        lint: Lint::CjsonEmptyTable,
        headers: &[],
        not_claimed: &[],
        cells: [
            (
                "local raw = redis.call('GET', KEYS[1])
if not raw then
  return 0
end
local job = cjson.decode(raw)
job.attempts = (tonumber(job.attempts) or 0) + 1
redis.call('SET', KEYS[1], cjson.encode(job)) --<
return job.attempts",
                "local raw = redis.call('GET', KEYS[1])
if not raw then
  return 0
end
local attempts = redis.call('HINCRBY', KEYS[2], 'attempts', 1)
redis.call('SET', KEYS[1], raw)
return attempts",
            ),
            (
                "local entry = {}
entry.queue = ARGV[1]
entry.payload = cjson.decode(ARGV[2])
redis.call('SET', KEYS[1], cjson.encode(entry)) --<
return 1",
                "local entry = {}
entry.queue = ARGV[1]
entry.payload = ARGV[2]
redis.call('SET', KEYS[1], cjson.encode(entry))
return 1",
            ),
            (
                "local moved = 0
for _, raw in ipairs(redis.call('LRANGE', KEYS[1], 0, 99)) do
  local job = cjson.decode(raw)
  job.retried = true
  redis.call('RPUSH', KEYS[2], cjson.encode(job)) --<
  moved = moved + 1
end
return moved",
                "local moved = 0
for _, raw in ipairs(redis.call('LRANGE', KEYS[1], 0, 99)) do
  redis.call('RPUSH', KEYS[2], raw)
  redis.call('HSET', KEYS[3], raw, 'retried')
  moved = moved + 1
end
return moved",
            ),
            (
                "local doc
if ARGV[1] == 'stored' then
  doc = cjson.decode(redis.call('GET', KEYS[1]) or '{}')
else
  doc = cjson.decode(ARGV[2])
end
return cjson.encode({saved = ARGV[3], doc = doc}) --<",
                "local text
if ARGV[1] == 'stored' then
  text = redis.call('GET', KEYS[1]) or '{}'
else
  text = ARGV[2]
end
return '{\"saved\":' .. cjson.encode(ARGV[3]) .. ',\"doc\":' .. text .. '}'",
            ),
        ],
    },
];
