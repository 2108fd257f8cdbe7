-- Bug: numeric strings compared lexically. ZSCORE answers a string, and so
-- is ARGV[2]: `>` compares them as text, where '10' < '9'.
-- Reported: class of bug (scores and timestamps compared without
-- `tonumber`).
-- declared: keys=1 args=2
-- expect: lexical_comparison 8
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and score > ARGV[2] then
  return 1
end
return 0
