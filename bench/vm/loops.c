// Nested counted loops of integer arithmetic. The floor for compiled code (run.py
// compiles it with `cc -O2`).
#include <stdint.h>
#include <stdio.h>

int main(void) {
  int64_t s = 0;
  for (int64_t i = 0; i < 10000; i++)
    for (int64_t j = 0; j < 10000; j++) s += i * j + (i ^ j);
  printf("%lld %lld\n", (long long)(s % 1000003), (long long)s);
  return 0;
}
