-- Bug: INCRBY with a float. Half of an odd weight is fractional: INCRBY
-- refuses it ("value is not an integer or out of range"); INCRBYFLOAT was
-- meant.
-- Reported: class of bug.
-- declared: keys=1 args=1
-- expect: fractional_argument 7
return redis.call('INCRBY', KEYS[1], tonumber(ARGV[1]) * 0.5)
