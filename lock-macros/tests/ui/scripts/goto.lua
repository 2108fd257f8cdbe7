-- `goto` arrived in Lua 5.2; Redis runs Lua 5.1.
for i = 1, 3 do
  if i == 2 then goto done end
end
::done::
return 1
