-- Bug: a global assignment. Redis scripts may not create globals: Redis 7
-- fails the script with "Attempt to modify a readonly table".
-- Reported: class of bug (a forgotten `local`).
-- declared: keys=1 args=0
-- expect: global_assignment 6
count = redis.call('INCR', KEYS[1])
return count
