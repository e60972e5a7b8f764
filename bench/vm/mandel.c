// A float loop: Mandelbrot iteration counts over a grid. The floor for compiled code
// (run.py compiles it with `cc -O2`: no -ffast-math, so the float operations happen in
// the program's order, as in Mini and Lua).
#include <stdint.h>
#include <stdio.h>

int main(void) {
  int64_t total = 0;
  int64_t size = 1000;
  for (int64_t py = 0; py < size; py++) {
    for (int64_t px = 0; px < size; px++) {
      double cr = 2.5 * (double)px / (double)size - 2.0;
      double ci = 2.0 * (double)py / (double)size - 1.0;
      double zr = 0.0, zi = 0.0;
      int64_t it = 0;
      while (it < 100 && zr * zr + zi * zi <= 4.0) {
        double t = zr * zr - zi * zi + cr;
        zi = 2.0 * zr * zi + ci;
        zr = t;
        it += 1;
      }
      total += it;
    }
  }
  printf("%lld\n", (long long)total);
  return 0;
}
