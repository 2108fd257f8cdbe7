//! Comparisons and conditions: nil and new tables, through helpers, modules and HGETALL maps.

use super::Class;
use redlua_analyzer::Lint;

pub(super) const CLASSES: &[Class] = &[
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
