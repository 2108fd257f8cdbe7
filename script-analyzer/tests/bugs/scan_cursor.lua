-- Bug: a SCAN cursor compared with a number. The cursor is a bulk string,
-- '0' when the scan is over, never the number 0: the loop never ends.
-- Reported: class of bug (Redis's SCAN documentation: the cursor is
-- returned as a string).
-- declared: keys=0 args=1
-- expect: scan_cursor 15
local cursor = '0'
local deleted = 0
repeat
  local reply = redis.call('SCAN', cursor, 'MATCH', ARGV[1], 'COUNT', 100)
  cursor = reply[1]
  for _, key in ipairs(reply[2]) do
    deleted = deleted + redis.call('DEL', key)
  end
until cursor == 0
return deleted
