-- Nested counted loops of integer arithmetic (sums stay below 2^53 so Lua's doubles agree).
local bxor = bit and bit.bxor or load("return function(a, b) return a ~ b end")()
local s = 0
for i = 0, 9999 do
  for j = 0, 9999 do
    s = s + i * j + bxor(i, j)
  end
end
print(string.format("%d %d", s % 1000003, s))
