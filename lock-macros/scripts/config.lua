-- The script of the attribute's documentation (its examples are doctests).
-- Reads one fixed key: the `literal_key` lint is allowed where it is used.
return redis.call('GET', 'config:mode')
