-- Raises an error reply on purpose.
return redis.error_reply('REDLUA_TEST failure on purpose')
