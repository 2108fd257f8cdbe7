-- Bug: cjson.encode of an empty table. Lua cannot tell an empty array from
-- an empty object, and the cjson bundled with Redis encodes `{}` as `{}`:
-- clients expecting a JSON array get an object when nothing matched.
-- Reported: class of bug (OpenResty's lua-cjson added
-- `encode_empty_table_as_object` for it; Redis's cjson has no such switch).
-- declared: keys=0 args=0
-- expect: cjson_empty_table 8
return cjson.encode({})
