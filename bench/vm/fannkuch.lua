-- Small int arrays read, written and reversed in place: the benchmarks game's
-- fannkuch-redux for n = 9, every permutation of 0..8 in the order of the counting
-- algorithm, each flipped until 0 is first. Prints the checksum and the most flips.
local n = 9
local perm, perm1, count = {}, {}, {}
for i = 0, n - 1 do perm1[i] = i; perm[i] = 0; count[i] = 0 end
local max_flips, checksum, sign, r = 0, 0, 1, n
while true do
  while r ~= 1 do
    count[r - 1] = r
    r = r - 1
  end
  for i = 0, n - 1 do perm[i] = perm1[i] end
  local flips = 0
  local k = perm[0]
  while k ~= 0 do
    local lo, hi = 0, k
    while lo < hi do
      perm[lo], perm[hi] = perm[hi], perm[lo]
      lo = lo + 1
      hi = hi - 1
    end
    flips = flips + 1
    k = perm[0]
  end
  if flips > max_flips then max_flips = flips end
  checksum = checksum + sign * flips
  sign = -sign
  -- The next permutation: rotate the first r + 1 elements left until a count is left.
  local more = false
  while r ~= n do
    local first = perm1[0]
    for i = 0, r - 1 do perm1[i] = perm1[i + 1] end
    perm1[r] = first
    count[r] = count[r] - 1
    if count[r] > 0 then
      more = true
      break
    end
    r = r + 1
  end
  if not more then break end
end
print(string.format("%d %d", checksum, max_flips))
