-- Real-world bug fixture `credits-blog-tonumber-get-nil-arithmetic`: see manifest.toml beside this file.
local studentId = ARGV[1]
local credits = tonumber(ARGV[2])
local chosenCreditKey = "student:credits:chosen:" .. studentId
local chosenCredit = tonumber(redis.call("get", chosenCreditKey))
local maxCreditKey = "student:credits:max:" .. studentId
local maxCredit = tonumber(redis.call("get", maxCreditKey))

if chosenCredit + credits > maxCredit then
  return 1
end
redis.call("incrby", chosenCreditKey, credits)
return 0
