// Small int arrays read, written and reversed in place: the benchmarks game's
// fannkuch-redux for n = 9, every permutation of 0..8 in the order of the counting
// algorithm, each flipped until 0 is first. The floor for compiled code (`cc -O2`).
#include <stdint.h>
#include <stdio.h>

int main(void) {
  enum { n = 9 };
  int64_t perm[n], perm1[n], count[n];
  for (int64_t i = 0; i < n; i++) perm1[i] = i;
  int64_t max_flips = 0, checksum = 0, sign = 1, r = n;
  for (;;) {
    while (r != 1) {
      count[r - 1] = r;
      r--;
    }
    for (int64_t i = 0; i < n; i++) perm[i] = perm1[i];
    int64_t flips = 0;
    int64_t k = perm[0];
    while (k != 0) {
      for (int64_t lo = 0, hi = k; lo < hi; lo++, hi--) {
        int64_t t = perm[lo];
        perm[lo] = perm[hi];
        perm[hi] = t;
      }
      flips++;
      k = perm[0];
    }
    if (flips > max_flips) max_flips = flips;
    checksum += sign * flips;
    sign = -sign;
    // The next permutation: rotate the first r + 1 elements left until a count is left.
    int more = 0;
    while (r != n) {
      int64_t first = perm1[0];
      for (int64_t i = 0; i < r; i++) perm1[i] = perm1[i + 1];
      perm1[r] = first;
      count[r]--;
      if (count[r] > 0) {
        more = 1;
        break;
      }
      r++;
    }
    if (!more) break;
  }
  printf("%lld %lld\n", (long long)checksum, (long long)max_flips);
  return 0;
}
