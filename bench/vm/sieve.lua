-- Array loads and stores in nested counted and uncounted loops.
local function sieve(n)
  local composite = {}
  for i = 0, n do composite[i] = 0 end
  local count = 0
  for i = 2, n do
    if composite[i] == 0 then
      count = count + 1
      local j = i * i
      while j <= n do
        composite[j] = 1
        j = j + i
      end
    end
  end
  return count
end
local total = 0
for r = 1, 10 do total = total + sieve(2000000) end
print(string.format("%d", total))
