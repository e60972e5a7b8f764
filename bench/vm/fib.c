// Recursive calls: call and return cost dominates. The C port is the floor for compiled
// code on this machine (run.py compiles it with `cc -O2`): what an optimizing compiler
// makes of the same program, with no safepoints and no bounds checks.
#include <stdint.h>
#include <stdio.h>

static int64_t fib(int64_t n) {
  if (n < 2) return n;
  return fib(n - 1) + fib(n - 2);
}

int main(void) {
  printf("%lld\n", (long long)fib(37));
  return 0;
}
