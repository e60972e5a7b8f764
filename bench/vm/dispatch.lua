-- Virtual and interface dispatch: 1,000 shapes of four classes in a mixed order, their
-- areas summed 10,000 times through an interface and a virtual method.
local Base = {}
Base.__index = Base
function Base:scale() return 1 end
function Base:weighted() return self:area() * self:scale() end
local function class() local c = setmetatable({}, {__index = Base}); c.__index = c; return c end
local Square, Rect, Tri, Disc = class(), class(), class(), class()
function Square:area() return self.a * self.a end
function Rect:area() return self.a * self.b end
function Rect:scale() return 2 end
function Tri:area() local p = self.a * self.h; return (p - p % 2) / 2 end
function Disc:area() return 3 * self.a * self.a end
function Disc:scale() return 3 end
local shapes = {}
for i = 0, 999 do
  local k = (i * 7) % 4
  local b
  if k == 0 then b = setmetatable({a = i % 13}, Square)
  elseif k == 1 then b = setmetatable({a = i % 11, b = i % 5}, Rect)
  elseif k == 2 then b = setmetatable({a = i % 17, h = i % 9}, Tri)
  else b = setmetatable({a = i % 7}, Disc) end
  shapes[i] = b
end
local total = 0
for r = 0, 9999 do
  for i = 0, 999 do total = total + shapes[i]:area() end
  total = total + shapes[r % 1000]:weighted()
end
print(string.format("%d", total))
