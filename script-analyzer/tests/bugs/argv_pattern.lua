-- Bug: ARGV used as a Lua pattern. `string.find` reads its second argument
-- as a pattern: a member containing `-`, `.` or `%` matches the wrong
-- entries, or raises "malformed pattern".
-- Reported: class of bug.
-- declared: keys=1 args=1
-- expect: argv_pattern 11
local members = redis.call('SMEMBERS', KEYS[1])
local found = 0
for _, member in ipairs(members) do
  -- meant: a plain substring search, string.find(member, ARGV[1], 1, true)
  if string.find(member, ARGV[1]) then
    found = found + 1
  end
end
return found
