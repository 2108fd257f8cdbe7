-- Real-world bug fixture `yii2-redis-query-quote-escape`: see manifest.toml beside this file.
local allpks=redis.call('LRANGE','country',0,-1)
local pks={}
local n=0
local v=nil
local i=0
local key='country'
for k,pk in ipairs(allpks) do
local cfullname0=redis.call('HGET','country' .. ':a:' .. pk, 'fullname')

if cfullname0=='the People\\'s Republic of China' then
i=i+1
if i>0 then
do return redis.call('HGETALL','country:a:' .. pk) end
end
end
end
return pks
