-- Recursion over small arrays: the solutions of the n-queens problem for n = 11, counted
-- by backtracking row by row, the free columns and diagonals kept in three arrays of
-- 0 and 1. Ten rounds; prints the solutions of one.
local function place(row, n, cols, up, down)
  if row == n then return 1 end
  local found = 0
  for c = 0, n - 1 do
    if cols[c] == 0 and up[row + c] == 0 and down[row - c + n - 1] == 0 then
      cols[c] = 1
      up[row + c] = 1
      down[row - c + n - 1] = 1
      found = found + place(row + 1, n, cols, up, down)
      cols[c] = 0
      up[row + c] = 0
      down[row - c + n - 1] = 0
    end
  end
  return found
end

local n = 11
local solutions = 0
for _ = 1, 10 do
  local cols, up, down = {}, {}, {}
  for i = 0, n - 1 do cols[i] = 0 end
  for i = 0, 2 * n - 2 do up[i] = 0; down[i] = 0 end
  solutions = place(0, n, cols, up, down)
end
print(string.format("%d", solutions))
