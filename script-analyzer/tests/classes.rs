//! The class matrix: every class of bug the analyzer claims to catch, in
//! each of four forms a real script moves a value through before the
//! mistake happens:
//!
//! - **local**: a local variable, possibly reassigned;
//! - **field**: a table field (`t.x = ...`, `t[1]`);
//! - **loop**: a `for` loop (the value is made, carried or used in it);
//! - **branch**: an `if` (the value is set in branches, or a guard is on
//!   the path).
//!
//! Each cell has a buggy script, whose bug lines end in `--<` and where the
//! class's lint must report, there and nowhere else, and a correct variant of the
//! same script, where that lint must report nothing. The scripts are read
//! as `lockctl lint` reads a bare file: a `-- redlua:` header, when there
//! is one, says what the caller declares. Classes about what a script
//! returns are checked twice, without a header and with one declaring the
//! caller's type.
//!
//! `cargo test -p redlua-analyzer --test classes -- --nocapture` prints the
//! matrix, one line a class, one column a form. A cell the analyzer does
//! not claim is listed with its reason (`not_claimed`) and shown as `-`.

use redlua_analyzer::{Lint, Options, analyze, header};

/// The four forms, as the matrix's columns.
const FORMS: [&str; 4] = ["local", "field", "loop", "branch"];

/// Where the bug line of a buggy script is marked.
const MARK: &str = "--<";

/// One class of bug: its lint, and for each form a buggy and a correct
/// script.
struct Class {
    name: &'static str,
    lint: Lint,
    /// Header lines to check the class under, besides none at all (a
    /// declared return type).
    headers: &'static [&'static str],
    /// `(buggy, correct)` for each of [`FORMS`], in order.
    cells: [(&'static str, &'static str); 4],
    /// Cells left out of the matrix: the form, whether only without a
    /// header, and why the analyzer does not claim them.
    not_claimed: &'static [(&'static str, bool, &'static str)],
}

const CLASSES: &[Class] = &[
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
    Class {
        name: "a record's field (unpack of HMGET) compared with nil",
        lint: Lint::NilComparison,
        headers: &[],
        not_claimed: &[],
        cells: [
            (
                "local state, owner = unpack(redis.call('HMGET', KEYS[1], 'state', 'owner'))
if owner == nil then --<
  return 0
end
return state",
                "local state, owner = unpack(redis.call('HMGET', KEYS[1], 'state', 'owner'))
if not owner then
  return 0
end
return state",
            ),
            (
                "local job = {}
job.state, job.owner = unpack(redis.call('HMGET', KEYS[1], 'state', 'owner'))
if job.owner ~= nil then --<
  return job.owner
end
return 0",
                "local job = {}
job.state, job.owner = unpack(redis.call('HMGET', KEYS[1], 'state', 'owner'))
if job.owner then
  return job.owner
end
return 0",
            ),
            (
                "local held = 0
for _, key in ipairs(KEYS) do
  local state, owner = unpack(redis.call('HMGET', key, 'state', 'owner'))
  if owner ~= nil then --<
    held = held + 1
  end
end
return held",
                "local held = 0
for _, key in ipairs(KEYS) do
  local state, owner = unpack(redis.call('HMGET', key, 'state', 'owner'))
  if owner ~= nil and owner ~= false then
    held = held + 1
  end
end
return held",
            ),
            (
                "local state, owner
if ARGV[1] == 'lock' then
  state, owner = unpack(redis.call('HMGET', KEYS[1], 'state', 'owner'))
else
  state, owner = unpack(redis.call('HMGET', KEYS[2], 'state', 'owner'))
end
if owner == nil then --<
  return 0
end
return 1",
                "local state, owner
if ARGV[1] == 'lock' then
  state, owner = unpack(redis.call('HMGET', KEYS[1], 'state', 'owner'))
else
  state, owner = unpack(redis.call('HMGET', KEYS[2], 'state', 'owner'))
end
if owner == false then
  return 0
end
return 1",
            ),
        ],
    },
    Class {
        name: "a value compared with a new table (`v == {}`)",
        lint: Lint::TableComparison,
        headers: &[],
        not_claimed: &[],
        cells: [
            (
                "local failure = redis.call('HGET', KEYS[1], 'failure')
if failure == {} then --<
  redis.call('HSET', KEYS[1], 'failure', ARGV[1])
end
return 1",
                "local failure = redis.call('HGET', KEYS[1], 'failure')
if not failure then
  redis.call('HSET', KEYS[1], 'failure', ARGV[1])
end
return 1",
            ),
            (
                "local job = cjson.decode(redis.call('GET', KEYS[1]) or '{}')
if job.tags ~= {} then --<
  redis.call('SADD', KEYS[2], unpack(job.tags))
end
return 1",
                "local job = cjson.decode(redis.call('GET', KEYS[1]) or '{}')
if job.tags and next(job.tags) ~= nil then
  redis.call('SADD', KEYS[2], unpack(job.tags))
end
return 1",
            ),
            (
                "local missing = 0
for _, key in ipairs(KEYS) do
  local members = redis.call('SMEMBERS', key)
  if members == {} then --<
    missing = missing + 1
  end
end
return missing",
                "local missing = 0
for _, key in ipairs(KEYS) do
  local members = redis.call('SMEMBERS', key)
  if #members == 0 then
    missing = missing + 1
  end
end
return missing",
            ),
            (
                "local found
if ARGV[1] == 'set' then
  found = redis.call('SMEMBERS', KEYS[1])
else
  found = redis.call('LRANGE', KEYS[1], 0, -1)
end
if found == {} then --<
  return 0
end
return #found",
                "local found
if ARGV[1] == 'set' then
  found = redis.call('SMEMBERS', KEYS[1])
else
  found = redis.call('LRANGE', KEYS[1], 0, -1)
end
if next(found) == nil then
  return 0
end
return #found",
            ),
        ],
    },
    Class {
        name: "an integer reply, given by a helper, used as a condition",
        lint: Lint::IntegerCondition,
        headers: &[],
        not_claimed: &[],
        cells: [
            (
                "local function locked(key)
  return redis.call('EXISTS', key)
end
local busy = locked(KEYS[1])
if busy then --<
  return 0
end
return redis.call('SET', KEYS[1], ARGV[1], 'NX') and 1 or 0",
                "local function locked(key)
  return redis.call('EXISTS', key)
end
local busy = locked(KEYS[1])
if busy == 1 then
  return 0
end
return redis.call('SET', KEYS[1], ARGV[1], 'NX') and 1 or 0",
            ),
            (
                "local function member(key, value)
  return redis.call('SISMEMBER', key, value)
end
local seen = {}
seen.first = member(KEYS[1], ARGV[1])
if not seen.first then --<
  redis.call('SADD', KEYS[1], ARGV[1])
end
return 1",
                "local function member(key, value)
  return redis.call('SISMEMBER', key, value)
end
local seen = {}
seen.first = member(KEYS[1], ARGV[1])
if seen.first == 0 then
  redis.call('SADD', KEYS[1], ARGV[1])
end
return 1",
            ),
            (
                "local function removed(key, id)
  return redis.call('LREM', key, 0, id)
end
local requeued = 0
for _, id in ipairs(ARGV) do
  if removed(KEYS[1], id) then --<
    redis.call('RPUSH', KEYS[2], id)
    requeued = requeued + 1
  end
end
return requeued",
                "local function removed(key, id)
  return redis.call('LREM', key, 0, id)
end
local requeued = 0
for _, id in ipairs(ARGV) do
  if removed(KEYS[1], id) > 0 then
    redis.call('RPUSH', KEYS[2], id)
    requeued = requeued + 1
  end
end
return requeued",
            ),
            (
                "local function exists(key)
  return redis.call('HEXISTS', key, ARGV[1])
end
local found
if ARGV[2] == 'primary' then
  found = exists(KEYS[1])
else
  found = exists(KEYS[2])
end
if found then --<
  return 1
end
return 0",
                "local function exists(key)
  return redis.call('HEXISTS', key, ARGV[1])
end
local found
if ARGV[2] == 'primary' then
  found = exists(KEYS[1])
else
  found = exists(KEYS[2])
end
if found == 1 then
  return 1
end
return 0",
            ),
        ],
    },
    Class {
        name: "a nil reply, given by a helper, compared with nil",
        lint: Lint::NilComparison,
        headers: &[],
        not_claimed: &[],
        cells: [
            (
                "local function lockOwner(key)
  return redis.call('GET', key)
end
local owner = lockOwner(KEYS[1])
if owner == nil then --<
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0",
                "local function lockOwner(key)
  return redis.call('GET', key)
end
local owner = lockOwner(KEYS[1])
if not owner then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0",
            ),
            (
                "local function field(key, name)
  return redis.call('HGET', key, name)
end
local job = {}
job.state = field(KEYS[1], 'state')
if job.state ~= nil then --<
  return job.state
end
return 'missing'",
                "local function field(key, name)
  return redis.call('HGET', key, name)
end
local job = {}
job.state = field(KEYS[1], 'state')
if job.state then
  return job.state
end
return 'missing'",
            ),
            (
                "local function scoreOf(member)
  return redis.call('ZSCORE', KEYS[1], member)
end
local absent = 0
for _, member in ipairs(ARGV) do
  if scoreOf(member) == nil then --<
    absent = absent + 1
  end
end
return absent",
                "local function scoreOf(member)
  return redis.call('ZSCORE', KEYS[1], member)
end
local absent = 0
for _, member in ipairs(ARGV) do
  if scoreOf(member) == false then
    absent = absent + 1
  end
end
return absent",
            ),
            (
                "local function peek(key)
  return redis.call('LINDEX', key, 0)
end
local head
if ARGV[1] == 'high' then
  head = peek(KEYS[1])
else
  head = peek(KEYS[2])
end
if head == nil then --<
  return 0
end
return head",
                "local function peek(key)
  return redis.call('LINDEX', key, 0)
end
local head
if ARGV[1] == 'high' then
  head = peek(KEYS[1])
else
  head = peek(KEYS[2])
end
if not head then
  return 0
end
return head",
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
    Class {
        name: "a field of a map built from HGETALL is a string",
        lint: Lint::NumberStringComparison,
        headers: &[],
        not_claimed: &[],
        cells: [
            (
                "local raw = redis.call('HGETALL', KEYS[1])
local job = {}
for i = 1, #raw, 2 do
  job[raw[i]] = raw[i + 1]
end
local attempts = job.attempts or 0
if attempts >= tonumber(ARGV[1]) then --<
  return 0
end
return 1",
                "local raw = redis.call('HGETALL', KEYS[1])
local job = {}
for i = 1, #raw, 2 do
  job[raw[i]] = raw[i + 1]
end
local attempts = tonumber(job.attempts) or 0
if attempts >= tonumber(ARGV[1]) then
  return 0
end
return 1",
            ),
            (
                "local raw = redis.call('HGETALL', KEYS[1])
local job = {}
for i = 1, #raw, 2 do
  job[raw[i]] = raw[i + 1]
end
if job.priority and job.priority > 5 then --<
  return 1
end
return 0",
                "local raw = redis.call('HGETALL', KEYS[1])
local job = {}
for i = 1, #raw, 2 do
  job[raw[i]] = raw[i + 1]
end
if job.priority and tonumber(job.priority) > 5 then
  return 1
end
return 0",
            ),
            (
                "local expired = 0
for _, key in ipairs(KEYS) do
  local raw = redis.call('HGETALL', key)
  local lease = {}
  for i = 1, #raw, 2 do
    lease[raw[i]] = raw[i + 1]
  end
  if lease.deadline and lease.deadline < tonumber(ARGV[1]) then --<
    expired = expired + 1
  end
end
return expired",
                "local expired = 0
for _, key in ipairs(KEYS) do
  local raw = redis.call('HGETALL', key)
  local lease = {}
  for i = 1, #raw, 2 do
    lease[raw[i]] = raw[i + 1]
  end
  if lease.deadline and tonumber(lease.deadline) < tonumber(ARGV[1]) then
    expired = expired + 1
  end
end
return expired",
            ),
            (
                "local raw
if ARGV[2] == 'primary' then
  raw = redis.call('HGETALL', KEYS[1])
else
  raw = redis.call('HGETALL', KEYS[2])
end
local stats = {}
for i = 1, #raw, 2 do
  stats[raw[i]] = raw[i + 1]
end
if stats.hits == 0 then --<
  return 0
end
return 1",
                "local raw
if ARGV[2] == 'primary' then
  raw = redis.call('HGETALL', KEYS[1])
else
  raw = redis.call('HGETALL', KEYS[2])
end
local stats = {}
for i = 1, #raw, 2 do
  stats[raw[i]] = raw[i + 1]
end
if tonumber(stats.hits) == 0 then
  return 0
end
return 1",
            ),
        ],
    },
    Class {
        name: "a nil reply, given by a module's function, compared with nil",
        lint: Lint::NilComparison,
        headers: &[],
        not_claimed: &[],
        cells: [
            (
                "local Jobs = {}
function Jobs.state(id)
  return redis.call('HGET', KEYS[1] .. id, 'state')
end
local state = Jobs.state(ARGV[1])
if state == nil then --<
  return 'missing'
end
return state",
                "local Jobs = {}
function Jobs.state(id)
  return redis.call('HGET', KEYS[1] .. id, 'state')
end
local state = Jobs.state(ARGV[1])
if not state then
  return 'missing'
end
return state",
            ),
            (
                "local Jobs = {}
function Jobs:owner(id)
  return redis.call('HGET', KEYS[1] .. id, 'owner')
end
local job = {}
job.owner = Jobs:owner(ARGV[1])
if job.owner ~= nil then --<
  return job.owner
end
return 0",
                "local Jobs = {}
function Jobs:owner(id)
  return redis.call('HGET', KEYS[1] .. id, 'owner')
end
local job = {}
job.owner = Jobs:owner(ARGV[1])
if job.owner then
  return job.owner
end
return 0",
            ),
            (
                "local Queue = {}
function Queue.next(key)
  return redis.call('LINDEX', key, 0)
end
local idle = 0
for _, key in ipairs(KEYS) do
  if Queue.next(key) == nil then --<
    idle = idle + 1
  end
end
return idle",
                "local Queue = {}
function Queue.next(key)
  return redis.call('LINDEX', key, 0)
end
local idle = 0
for _, key in ipairs(KEYS) do
  if not Queue.next(key) then
    idle = idle + 1
  end
end
return idle",
            ),
            (
                "local Store = {}
function Store:read(key)
  return redis.call('GET', key)
end
local value
if ARGV[1] == 'primary' then
  value = Store:read(KEYS[1])
else
  value = Store:read(KEYS[2])
end
if value == nil then --<
  return 0
end
return value",
                "local Store = {}
function Store:read(key)
  return redis.call('GET', key)
end
local value
if ARGV[1] == 'primary' then
  value = Store:read(KEYS[1])
else
  value = Store:read(KEYS[2])
end
if value == false then
  return 0
end
return value",
            ),
        ],
    },
];

/// The lines (1-based) where `lint` reports on `source`, read as a bare
/// file with its header.
fn lines_of(lint: Lint, source: &str) -> Vec<usize> {
    let mut options = Options::default();
    header::parse(source)
        .unwrap_or_else(|e| panic!("bad header at line {}: {source}", e.line))
        .apply(&mut options);
    analyze(source, &options)
        .diagnostics
        .iter()
        .filter(|d| d.lint == lint)
        .filter_map(|d| d.primary_span())
        .map(|span| span.start.line)
        .collect()
}

/// The lines (1-based) a buggy script marks.
fn marked_lines(source: &str) -> Vec<usize> {
    let marked: Vec<usize> = (1..)
        .zip(source.lines())
        .filter(|(_, line)| line.trim_end().ends_with(MARK))
        .map(|(n, _)| n)
        .collect();
    assert!(!marked.is_empty(), "a line marked `{MARK}` in:\n{source}");
    marked
}

/// What one cell found, if it does not hold.
fn check(lint: Lint, buggy: &str, correct: &str) -> Option<String> {
    assert!(
        !correct.contains(MARK),
        "a correct script is not marked:\n{correct}"
    );
    let expected = marked_lines(buggy);
    let mut found = lines_of(lint, buggy);
    found.dedup();
    let in_correct = lines_of(lint, correct);
    let mut problems = Vec::new();
    if found != expected {
        problems.push(format!(
            "buggy: expected lines {expected:?}, found {found:?}"
        ));
    }
    if !in_correct.is_empty() {
        problems.push(format!("correct: found {in_correct:?}"));
    }
    (!problems.is_empty()).then(|| problems.join("; "))
}

#[test]
fn every_class_is_caught_in_every_form_and_quiet_on_its_correct_variant() {
    let mut failures = Vec::new();
    let mut unclaimed = Vec::new();
    let mut table = format!(
        "{:<58} {:<22} {}\n",
        "class",
        "lint",
        FORMS.map(|f| format!("{f:<8}")).join(" ")
    );
    let mut held = 0;
    let mut cells = 0;
    for class in CLASSES {
        for header in std::iter::once(None).chain(class.headers.iter().map(Some)) {
            let name = match header {
                None => class.name.to_string(),
                Some(h) => format!("{} [{}]", class.name, h.trim_start_matches("-- redlua: ")),
            };
            let mut row = format!("{name:<58} {:<22}", class.lint.name());
            for (form, (buggy, correct)) in FORMS.iter().zip(class.cells) {
                if let Some((_, _, why)) = class
                    .not_claimed
                    .iter()
                    .find(|(f, bare_only, _)| f == form && (!bare_only || header.is_none()))
                {
                    row.push_str(&format!(" {:<8}", "-"));
                    unclaimed.push(format!("{name} / {form}: {why}"));
                    continue;
                }
                let with_header = |s: &str| match header {
                    None => s.to_string(),
                    Some(h) => format!("{h}\n{s}"),
                };
                cells += 1;
                match check(class.lint, &with_header(buggy), &with_header(correct)) {
                    None => {
                        held += 1;
                        row.push_str(&format!(" {:<8}", "ok"));
                    }
                    Some(problem) => {
                        row.push_str(&format!(" {:<8}", "MISSING"));
                        failures.push(format!("{name} / {form}: {problem}"));
                    }
                }
            }
            table.push_str(row.trim_end());
            table.push('\n');
        }
    }
    println!(
        "{table}cells held: {held} of {cells}; not claimed (-): {}\n{}",
        unclaimed.len(),
        unclaimed.join("\n")
    );
    assert!(
        failures.is_empty(),
        "cells that do not hold:\n{}",
        failures.join("\n")
    );
}
