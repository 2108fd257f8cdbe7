//! Replies misread: strings taken for numbers, flat arrays, false and nil replies, RESP3, pcall.

use super::Class;
use redlua_analyzer::Lint;

pub(super) const CLASSES: &[Class] = &[
    Class {
        name: "reply element is a string (TIME[1])",
        lint: Lint::NumberStringComparison,
        headers: &[],
        not_claimed: &[],
        cells: [
            (
                "local now = redis.call('TIME')[1]
local deadline = tonumber(ARGV[1])
if now > deadline then --<
  return 1
end
return 0",
                "local now = tonumber(redis.call('TIME')[1])
local deadline = tonumber(ARGV[1])
if now > deadline then
  return 1
end
return 0",
            ),
            (
                "local clock = {}
clock.now = redis.call('TIME')[1]
if clock.now > tonumber(ARGV[1]) then --<
  return 1
end
return 0",
                "local clock = {}
clock.now = tonumber(redis.call('TIME')[1])
if clock.now > tonumber(ARGV[1]) then
  return 1
end
return 0",
            ),
            (
                "local late = 0
for _, part in ipairs(redis.call('TIME')) do
  if part > 999 then --<
    late = late + 1
  end
end
return late",
                "local late = 0
for _, part in ipairs(redis.call('TIME')) do
  if tonumber(part) > 999 then
    late = late + 1
  end
end
return late",
            ),
            (
                "local t = redis.call('TIME')
local now
if ARGV[2] == 'us' then
  now = t[2]
else
  now = t[1]
end
if now > tonumber(ARGV[1]) then --<
  return 1
end
return 0",
                "local t = redis.call('TIME')
local now
if ARGV[2] == 'us' then
  now = tonumber(t[2])
else
  now = tonumber(t[1])
end
if now > tonumber(ARGV[1]) then
  return 1
end
return 0",
            ),
        ],
    },
    Class {
        name: "ipairs over a flat reply (WITHSCORES, HGETALL)",
        lint: Lint::FlatReplyIndex,
        headers: &[],
        not_claimed: &[],
        cells: [
            (
                "local entries = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local total = 0
for _, score in ipairs(entries) do
  total = total + score --<
end
return total",
                "local entries = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local total = 0
for i = 2, #entries, 2 do
  total = total + entries[i]
end
return total",
            ),
            (
                "local r = {}
r.fields = redis.call('HGETALL', KEYS[1])
local sum = 0
for _, value in ipairs(r.fields) do
  sum = sum + value --<
end
return sum",
                "local r = {}
r.fields = redis.call('HGETALL', KEYS[1])
local sum = 0
for i = 2, #r.fields, 2 do
  sum = sum + r.fields[i]
end
return sum",
            ),
            (
                "local sum = 0
for _, key in ipairs(KEYS) do
  local fields = redis.call('HGETALL', key)
  for _, value in ipairs(fields) do
    sum = sum + value --<
  end
end
return sum",
                "local sum = 0
for _, key in ipairs(KEYS) do
  local values = redis.call('HVALS', key)
  for _, value in ipairs(values) do
    sum = sum + value
  end
end
return sum",
            ),
            (
                "local r
if ARGV[1] == 'desc' then
  r = redis.call('ZREVRANGE', KEYS[1], 0, 9, 'WITHSCORES')
else
  r = redis.call('ZRANGE', KEYS[1], 0, 9, 'WITHSCORES')
end
local sum = 0
for _, score in ipairs(r) do
  sum = sum + score --<
end
return sum",
                "local r
if ARGV[1] == 'desc' then
  r = redis.call('ZREVRANGE', KEYS[1], 0, 9, 'WITHSCORES')
else
  r = redis.call('ZRANGE', KEYS[1], 0, 9, 'WITHSCORES')
end
local sum = 0
for i = 2, #r, 2 do
  sum = sum + r[i]
end
return sum",
            ),
        ],
    },
    Class {
        name: "a guard removes false, not string-ness",
        lint: Lint::NumberStringComparison,
        headers: &[],
        not_claimed: &[],
        cells: [
            (
                "local v = redis.call('GET', KEYS[1])
local limit = tonumber(ARGV[1])
if v and v > limit then --<
  return 0
end
return 1",
                "local v = tonumber(redis.call('GET', KEYS[1]))
local limit = tonumber(ARGV[1])
if v and v > limit then
  return 0
end
return 1",
            ),
            (
                "local limit = tonumber(ARGV[1])
local s = {}
s.count = redis.call('HGET', KEYS[1], 'count')
if s.count and s.count >= limit then --<
  return 0
end
return 1",
                "local limit = tonumber(ARGV[1])
local s = {}
s.count = tonumber(redis.call('HGET', KEYS[1], 'count'))
if s.count and s.count >= limit then
  return 0
end
return 1",
            ),
            (
                "local limit = tonumber(ARGV[1])
local over = 0
for _, key in ipairs(KEYS) do
  local v = redis.call('GET', key)
  if v and v > limit then --<
    over = over + 1
  end
end
return over",
                "local limit = tonumber(ARGV[1])
local over = 0
for _, key in ipairs(KEYS) do
  local v = redis.call('GET', key)
  if v and tonumber(v) > limit then
    over = over + 1
  end
end
return over",
            ),
            (
                "local v = redis.call('GET', KEYS[1])
if not v then
  return 1
end
if v > tonumber(ARGV[1]) then --<
  return 0
end
return 1",
                "local v = redis.call('GET', KEYS[1])
if not v then
  return 1
end
if tonumber(v) > tonumber(ARGV[1]) then
  return 0
end
return 1",
            ),
        ],
    },
    Class {
        name: "a number in place of a nil reply (`or 0`)",
        lint: Lint::NumberStringComparison,
        headers: &[],
        not_claimed: &[],
        cells: [
            (
                "local count = redis.call('GET', KEYS[1]) or 0
if count >= tonumber(ARGV[1]) then --<
  return 0
end
redis.call('INCR', KEYS[1])
return 1",
                "local count = tonumber(redis.call('GET', KEYS[1])) or 0
if count >= tonumber(ARGV[1]) then
  return 0
end
redis.call('INCR', KEYS[1])
return 1",
            ),
            (
                "local s = {}
s.used = redis.call('HGET', KEYS[1], 'used') or 0
if s.used > tonumber(ARGV[1]) then --<
  return 0
end
return 1",
                "local s = {}
s.used = tonumber(redis.call('HGET', KEYS[1], 'used')) or 0
if s.used > tonumber(ARGV[1]) then
  return 0
end
return 1",
            ),
            (
                "local over = 0
for _, k in ipairs(KEYS) do
  local n = redis.call('GET', k) or 0
  if n > 10 then --<
    over = over + 1
  end
end
return over",
                "local over = 0
for _, k in ipairs(KEYS) do
  local n = tonumber(redis.call('GET', k)) or 0
  if n > 10 then
    over = over + 1
  end
end
return over",
            ),
            (
                "local v = redis.call('HGET', KEYS[1], 'tokens')
if not v then
  v = 0
end
if v < tonumber(ARGV[1]) then --<
  return 0
end
return 1",
                "local v = redis.call('HGET', KEYS[1], 'tokens')
if not v then
  v = 0
else
  v = tonumber(v)
end
if v < tonumber(ARGV[1]) then
  return 0
end
return 1",
            ),
        ],
    },
    Class {
        name: "concatenation of a reply that may be false",
        lint: Lint::MaybeFalse,
        headers: &[],
        not_claimed: &[],
        cells: [
            (
                "local owner = redis.call('GET', KEYS[1])
return 'held by ' .. owner --<",
                "local owner = redis.call('GET', KEYS[1]) or 'nobody'
return 'held by ' .. owner",
            ),
            (
                "local lock = {}
lock.owner = redis.call('HGET', KEYS[1], 'owner')
redis.call('PUBLISH', KEYS[2], 'released:' .. lock.owner) --<
return 1",
                "local lock = {}
lock.owner = redis.call('HGET', KEYS[1], 'owner')
if lock.owner then
  redis.call('PUBLISH', KEYS[2], 'released:' .. lock.owner)
end
return 1",
            ),
            (
                "local out = ''
for _, key in ipairs(KEYS) do
  local v = redis.call('GET', key)
  out = out .. v .. ',' --<
end
return out",
                "local out = ''
for _, key in ipairs(KEYS) do
  local v = redis.call('GET', key)
  if v then
    out = out .. v .. ','
  end
end
return out",
            ),
            (
                "local v
if ARGV[1] == 'stored' then
  v = redis.call('GET', KEYS[1])
else
  v = ARGV[2]
end
return 'value=' .. v --<",
                "local v
if ARGV[1] == 'stored' then
  v = redis.call('GET', KEYS[1]) or ''
else
  v = ARGV[2]
end
return 'value=' .. v",
            ),
        ],
    },
    Class {
        name: "redis.setresp(3) with code for flat arrays",
        lint: Lint::FlatReplyIndex,
        headers: &[],
        not_claimed: &[],
        cells: [
            (
                "redis.setresp(3)
local h = redis.call('HGETALL', KEYS[1])
local n = 0
for i = 1, #h, 2 do --<
  redis.call('HSET', KEYS[2], h[i], h[i + 1]) --<
  n = n + 1
end
return n",
                "redis.setresp(3)
local h = redis.call('HGETALL', KEYS[1])
local n = 0
for field, value in pairs(h.map) do
  redis.call('HSET', KEYS[2], field, value)
  n = n + 1
end
return n",
            ),
            (
                "redis.setresp(3)
local r = {}
r.cfg = redis.call('CONFIG', 'GET', 'maxmemory')
return r.cfg[2] --<",
                "redis.setresp(3)
local r = {}
r.cfg = redis.call('CONFIG', 'GET', 'maxmemory')
return r.cfg.map['maxmemory']",
            ),
            (
                "redis.setresp(3)
local n = 0
for _, key in ipairs(KEYS) do
  local h = redis.call('HGETALL', key)
  n = n + #h / 2 --<
end
return n",
                "redis.setresp(3)
local n = 0
for _, key in ipairs(KEYS) do
  n = n + redis.call('HLEN', key)
end
return n",
            ),
            (
                "redis.setresp(3)
local r
if ARGV[1] == 'a' then
  r = redis.call('HGETALL', KEYS[1])
else
  r = redis.call('HGETALL', KEYS[2])
end
return r[1] --<",
                "redis.setresp(3)
local r
if ARGV[1] == 'a' then
  r = redis.call('HGETALL', KEYS[1])
else
  r = redis.call('HGETALL', KEYS[2])
end
return r.map[ARGV[2]]",
            ),
        ],
    },
    Class {
        name: "redis.pcall result tested for truth",
        lint: Lint::PcallUnchecked,
        headers: &[],
        not_claimed: &[],
        cells: [
            (
                "local r = redis.pcall('INCR', KEYS[1])
if not r then --<
  return 0
end
return 1",
                "local r = redis.pcall('INCR', KEYS[1])
if type(r) == 'table' and r.err then
  return 0
end
return 1",
            ),
            (
                "local res = {}
res.set = redis.pcall('SET', KEYS[1], ARGV[1])
if res.set then --<
  return 1
end
return 0",
                "local res = {}
res.set = redis.pcall('SET', KEYS[1], ARGV[1])
if res.set.err then
  return 0
end
return 1",
            ),
            (
                "local n = 0
for _, key in ipairs(KEYS) do
  local r = redis.pcall('DEL', key)
  if r then --<
    n = n + 1
  end
end
return n",
                "local n = 0
for _, key in ipairs(KEYS) do
  local r = redis.pcall('DEL', key)
  if type(r) == 'number' then
    n = n + r
  end
end
return n",
            ),
            (
                "local r
if ARGV[1] == 'by' then
  r = redis.pcall('INCRBY', KEYS[1], ARGV[2])
else
  r = redis.pcall('INCR', KEYS[1])
end
if not r then --<
  return -1
end
return 1",
                "local r
if ARGV[1] == 'by' then
  r = redis.pcall('INCRBY', KEYS[1], ARGV[2])
else
  r = redis.pcall('INCR', KEYS[1])
end
if type(r) == 'table' and r.err then
  return -1
end
return 1",
            ),
        ],
    },
];
