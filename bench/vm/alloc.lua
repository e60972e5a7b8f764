-- Allocation churn: 1 million short-lived arrays (16 to 79 elements), filled and summed,
-- with a small live window of 64 arrays that are replaced as the loop goes.
local window = {}
for i = 0, 63 do window[i] = 0 end
local keep0, keep1 = {[0] = 0}, {[0] = 0}
local total = 0
for r = 0, 1000000 - 1 do
  local n = 16 + r % 64
  local a = {}
  for i = 0, n - 1 do a[i] = 0 end  -- Mini arrays start zeroed
  for i = 0, n - 1 do a[i] = r + i end
  local s = 0
  for i = 0, n - 1 do s = s + a[i] end
  total = total + s % 1000
  window[r % 64] = n
  if r % 1000 == 0 then keep1 = keep0; keep0 = a end
end
total = total + keep0[0] % 1000 + keep1[0] % 1000 + window[7]
print(string.format("%d", total))
