// Recursion over small arrays: the solutions of the n-queens problem for n = 11, counted
// by backtracking row by row, the free columns and diagonals kept in three arrays of
// 0 and 1. Ten rounds. The floor for compiled code (`cc -O2`).
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int64_t place(int64_t row, int64_t n, int64_t* cols, int64_t* up, int64_t* down) {
  if (row == n) return 1;
  int64_t found = 0;
  for (int64_t c = 0; c < n; c++) {
    if (cols[c] == 0 && up[row + c] == 0 && down[row - c + n - 1] == 0) {
      cols[c] = 1;
      up[row + c] = 1;
      down[row - c + n - 1] = 1;
      found += place(row + 1, n, cols, up, down);
      cols[c] = 0;
      up[row + c] = 0;
      down[row - c + n - 1] = 0;
    }
  }
  return found;
}

int main(void) {
  enum { n = 11 };
  int64_t solutions = 0;
  for (int round = 0; round < 10; round++) {
    int64_t cols[n], up[2 * n - 1], down[2 * n - 1];
    memset(cols, 0, sizeof cols);
    memset(up, 0, sizeof up);
    memset(down, 0, sizeof down);
    solutions = place(0, n, cols, up, down);
  }
  printf("%lld\n", (long long)solutions);
  return 0;
}
