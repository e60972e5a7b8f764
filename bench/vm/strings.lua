-- Strings: 20,000 strings of 100 digits built by concatenation (each + makes a new
-- string), then read byte by byte and cut with substring.
local total = 0
for r = 0, 19999 do
  local s = ""
  for i = 0, 99 do s = s .. tostring((r + i) % 10) end
  local part = string.sub(s, 11, 60)
  for i = 1, #part do total = total + string.byte(part, i) - 48 end
  if s == part then total = total + 1 end
end
print(string.format("%d", total))
