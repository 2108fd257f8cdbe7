-- Removes the mark a waiting writer left (writer-preferring read/write
-- locks) when that writer stops waiting without the lock, so that readers
-- need not wait for a writer that is gone. A mark left by another waiting
-- writer is kept.
--
-- KEYS[1]  the mark
-- ARGV[1]  the writer field that left it, <owner>:write
--
-- Returns 1 when the mark was removed, 0 otherwise.
if redis.call('get', KEYS[1]) == ARGV[1] then
  redis.call('del', KEYS[1])
  return 1
end
return 0
