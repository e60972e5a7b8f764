-- Binary trees (the benchmarks game's algorithm): many short-lived trees of every depth
-- from 4 to DEPTH, one long-lived tree alongside; the collector's workload.
local DEPTH = 16
local function check(node)
  if node.left == nil then return 1 end
  return 1 + check(node.left) + check(node.right)
end
local function bottom_up(depth)
  if depth > 0 then return {left = bottom_up(depth - 1), right = bottom_up(depth - 1)} end
  return {}
end
local total = check(bottom_up(DEPTH + 1))
local long_lived = bottom_up(DEPTH)
local depth = 4
while depth <= DEPTH do
  local iterations = 2 ^ (DEPTH - depth + 4)
  local sum = 0
  for i = 1, iterations do sum = sum + check(bottom_up(depth)) end
  total = total + sum
  depth = depth + 2
end
print(string.format("%d", total + check(long_lived)))
