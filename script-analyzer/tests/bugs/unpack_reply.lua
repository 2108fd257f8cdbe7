-- Bug: unpack of a big or empty reply. `unpack` of a reply with more than
-- about 8,000 keys raises "too many results to unpack", and of an empty one
-- calls DEL with no key ("wrong number of arguments").
-- Reported: class of bug.
-- declared: keys=1 args=0
-- expect: unpack_reply 8
local members = redis.call('SMEMBERS', KEYS[1])
return redis.call('DEL', unpack(members))
