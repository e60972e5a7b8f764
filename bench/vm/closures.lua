-- Closures: a fold over 1,000 ints with a new lambda each round that captures the round's
-- factor, and a counter that a lambda updates in place (a captured variable written).
local function fold(xs, f, init)
  local acc = init
  for i = 0, 999 do acc = f(acc, xs[i]) end
  return acc
end
local xs = {}
for i = 0, 999 do xs[i] = i % 97 end
local total = 0
local calls = 0
for r = 0, 29999 do
  local k = r % 7 + 1
  total = total + fold(xs, function(a, x) calls = calls + 1; return (a + x * k) % 1000003 end, r)
end
print(string.format("%d", total + calls))
