-- Nested counted loops of integer arithmetic (kept below 2^53 so Lua's doubles agree).
local bxor = bit and bit.bxor or load("return function(a, b) return a ~ b end")()
local s = 0
for i = 0, 5999 do
  for j = 0, 5999 do
    s = (s + i * j + bxor(i, j)) % 1000003
  end
end
print(string.format("%d", s))
