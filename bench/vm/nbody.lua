-- Float arithmetic in nested loops: the benchmarks game's n-body simulation of the Sun and
-- the four gas giants, 1,000,000 steps of 0.01 days, the bodies in seven parallel arrays.
-- Prints the system's energy before and after, times 1e9 and truncated toward zero.
local sqrt = math.sqrt
local PI = 3.141592653589793
local DAYS_PER_YEAR = 365.24

local function advance(n, dt, x, y, z, vx, vy, vz, mass)
  for i = 0, n - 1 do
    local xi, yi, zi = x[i], y[i], z[i]
    local vxi, vyi, vzi = vx[i], vy[i], vz[i]
    local mi = mass[i]
    for j = i + 1, n - 1 do
      local dx = xi - x[j]
      local dy = yi - y[j]
      local dz = zi - z[j]
      local d2 = dx * dx + dy * dy + dz * dz
      local mag = dt / (d2 * sqrt(d2))
      local mj = mass[j] * mag
      vxi = vxi - dx * mj
      vyi = vyi - dy * mj
      vzi = vzi - dz * mj
      local mim = mi * mag
      vx[j] = vx[j] + dx * mim
      vy[j] = vy[j] + dy * mim
      vz[j] = vz[j] + dz * mim
    end
    vx[i], vy[i], vz[i] = vxi, vyi, vzi
  end
  for i = 0, n - 1 do
    x[i] = x[i] + dt * vx[i]
    y[i] = y[i] + dt * vy[i]
    z[i] = z[i] + dt * vz[i]
  end
end

local function energy(n, x, y, z, vx, vy, vz, mass)
  local e = 0.0
  for i = 0, n - 1 do
    e = e + 0.5 * mass[i] * (vx[i] * vx[i] + vy[i] * vy[i] + vz[i] * vz[i])
    for j = i + 1, n - 1 do
      local dx = x[i] - x[j]
      local dy = y[i] - y[j]
      local dz = z[i] - z[j]
      e = e - mass[i] * mass[j] / sqrt(dx * dx + dy * dy + dz * dz)
    end
  end
  return e
end

local function trunc(v)
  if v >= 0 then return math.floor(v) end
  return math.ceil(v)
end

local n = 5
local solar_mass = 4.0 * PI * PI
local x = {[0] = 0.0, 4.84143144246472090e+00, 8.34336671824457987e+00, 1.28943695621391310e+01,
           1.53796971148509165e+01}
local y = {[0] = 0.0, -1.16032004402742839e+00, 4.12479856412430479e+00, -1.51111514016986312e+01,
           -2.59193146099879641e+01}
local z = {[0] = 0.0, -1.03622044471123109e-01, -4.03523417114321381e-01, -2.23307578892655734e-01,
           1.79258772950371181e-01}
local vx = {[0] = 0.0, 1.66007664274403694e-03 * DAYS_PER_YEAR, -2.76742510726862411e-03 * DAYS_PER_YEAR,
            2.96460137564761618e-03 * DAYS_PER_YEAR, 2.68067772490389322e-03 * DAYS_PER_YEAR}
local vy = {[0] = 0.0, 7.69901118419740425e-03 * DAYS_PER_YEAR, 4.99852801234917238e-03 * DAYS_PER_YEAR,
            2.37847173959480950e-03 * DAYS_PER_YEAR, 1.62824170038242295e-03 * DAYS_PER_YEAR}
local vz = {[0] = 0.0, -6.90460016972063023e-05 * DAYS_PER_YEAR, 2.30417297573763929e-05 * DAYS_PER_YEAR,
            -2.96589568540237556e-05 * DAYS_PER_YEAR, -9.51592254519715870e-05 * DAYS_PER_YEAR}
local mass = {[0] = solar_mass, 9.54791938424326609e-04 * solar_mass, 2.85885980666130812e-04 * solar_mass,
              4.36624404335156298e-05 * solar_mass, 5.15138902046611451e-05 * solar_mass}
-- The Sun moves so that the system's momentum is zero.
local px, py, pz = 0.0, 0.0, 0.0
for i = 0, n - 1 do
  px = px + vx[i] * mass[i]
  py = py + vy[i] * mass[i]
  pz = pz + vz[i] * mass[i]
end
vx[0] = -px / solar_mass
vy[0] = -py / solar_mass
vz[0] = -pz / solar_mass
local before = energy(n, x, y, z, vx, vy, vz, mass)
for _ = 1, 1000000 do advance(n, 0.01, x, y, z, vx, vy, vz, mass) end
local after = energy(n, x, y, z, vx, vy, vz, mass)
print(string.format("%d %d", trunc(before * 1000000000.0), trunc(after * 1000000000.0)))
