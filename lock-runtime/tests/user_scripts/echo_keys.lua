-- Returns { number of keys, number of args, KEYS..., ARGV... }.
local out = { #KEYS, #ARGV }
for _, k in ipairs(KEYS) do out[#out + 1] = k end
for _, a in ipairs(ARGV) do out[#out + 1] = a end
return out
