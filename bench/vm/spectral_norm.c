// Floats and small calls: the spectral norm of A(i, j) = 1 / ((i+j)(i+j+1)/2 + i + 1) by ten
// rounds of the power method on a 1000 x 1000 section. The floor for compiled code
// (`cc -O2`, no -ffast-math: the float operations in the program's order).
#include <math.h>
#include <stdint.h>
#include <stdio.h>

static double a(int64_t i, int64_t j) {
  int64_t ij = i + j;
  return 1.0 / (double)(ij * (ij + 1) / 2 + i + 1);
}

static void mul_av(int64_t n, const double* v, double* av) {
  for (int64_t i = 0; i < n; i++) {
    double s = 0.0;
    for (int64_t j = 0; j < n; j++) s += a(i, j) * v[j];
    av[i] = s;
  }
}

static void mul_atv(int64_t n, const double* v, double* atv) {
  for (int64_t i = 0; i < n; i++) {
    double s = 0.0;
    for (int64_t j = 0; j < n; j++) s += a(j, i) * v[j];
    atv[i] = s;
  }
}

static void mul_atav(int64_t n, const double* v, double* out, double* tmp) {
  mul_av(n, v, tmp);
  mul_atv(n, tmp, out);
}

int main(void) {
  enum { n = 1000 };
  static double u[n], v[n], tmp[n];
  for (int64_t i = 0; i < n; i++) u[i] = 1.0;
  for (int k = 0; k < 10; k++) {
    mul_atav(n, u, v, tmp);
    mul_atav(n, v, u, tmp);
  }
  double vbv = 0.0, vv = 0.0;
  for (int64_t i = 0; i < n; i++) {
    vbv += u[i] * v[i];
    vv += v[i] * v[i];
  }
  printf("%lld\n", (long long)(sqrt(vbv / vv) * 1000000000.0));
  return 0;
}
