-- A float loop: Mandelbrot iteration counts over a grid.
local total = 0
local size = 1000
for py = 0, size - 1 do
  for px = 0, size - 1 do
    local cr = 2.5 * px / size - 2.0
    local ci = 2.0 * py / size - 1.0
    local zr, zi, it = 0.0, 0.0, 0
    while it < 100 and zr * zr + zi * zi <= 4.0 do
      local t = zr * zr - zi * zi + cr
      zi = 2.0 * zr * zi + ci
      zr = t
      it = it + 1
    end
    total = total + it
  end
end
print(string.format("%d", total))
