// Float arithmetic in nested loops: the benchmarks game's n-body simulation of the Sun and
// the four gas giants, 1,000,000 steps of 0.01 days, the bodies in seven parallel arrays.
// The floor for compiled code (`cc -O2`, no -ffast-math: the float operations in the
// program's order).
#include <math.h>
#include <stdint.h>
#include <stdio.h>

enum { N = 5 };
static const double PI = 3.141592653589793;
static const double DAYS_PER_YEAR = 365.24;

static void advance(int64_t n, double dt, double* x, double* y, double* z, double* vx, double* vy, double* vz,
                    const double* mass) {
  for (int64_t i = 0; i < n; i++) {
    double xi = x[i], yi = y[i], zi = z[i];
    double vxi = vx[i], vyi = vy[i], vzi = vz[i];
    double mi = mass[i];
    for (int64_t j = i + 1; j < n; j++) {
      double dx = xi - x[j];
      double dy = yi - y[j];
      double dz = zi - z[j];
      double d2 = dx * dx + dy * dy + dz * dz;
      double mag = dt / (d2 * sqrt(d2));
      double mj = mass[j] * mag;
      vxi -= dx * mj;
      vyi -= dy * mj;
      vzi -= dz * mj;
      double mim = mi * mag;
      vx[j] += dx * mim;
      vy[j] += dy * mim;
      vz[j] += dz * mim;
    }
    vx[i] = vxi;
    vy[i] = vyi;
    vz[i] = vzi;
  }
  for (int64_t i = 0; i < n; i++) {
    x[i] += dt * vx[i];
    y[i] += dt * vy[i];
    z[i] += dt * vz[i];
  }
}

static double energy(int64_t n, const double* x, const double* y, const double* z, const double* vx,
                     const double* vy, const double* vz, const double* mass) {
  double e = 0.0;
  for (int64_t i = 0; i < n; i++) {
    e += 0.5 * mass[i] * (vx[i] * vx[i] + vy[i] * vy[i] + vz[i] * vz[i]);
    for (int64_t j = i + 1; j < n; j++) {
      double dx = x[i] - x[j];
      double dy = y[i] - y[j];
      double dz = z[i] - z[j];
      e -= mass[i] * mass[j] / sqrt(dx * dx + dy * dy + dz * dz);
    }
  }
  return e;
}

int main(void) {
  double solar_mass = 4.0 * PI * PI;
  double x[N] = {0.0, 4.84143144246472090e+00, 8.34336671824457987e+00, 1.28943695621391310e+01,
                 1.53796971148509165e+01};
  double y[N] = {0.0, -1.16032004402742839e+00, 4.12479856412430479e+00, -1.51111514016986312e+01,
                 -2.59193146099879641e+01};
  double z[N] = {0.0, -1.03622044471123109e-01, -4.03523417114321381e-01, -2.23307578892655734e-01,
                 1.79258772950371181e-01};
  double vx[N] = {0.0, 1.66007664274403694e-03 * DAYS_PER_YEAR, -2.76742510726862411e-03 * DAYS_PER_YEAR,
                  2.96460137564761618e-03 * DAYS_PER_YEAR, 2.68067772490389322e-03 * DAYS_PER_YEAR};
  double vy[N] = {0.0, 7.69901118419740425e-03 * DAYS_PER_YEAR, 4.99852801234917238e-03 * DAYS_PER_YEAR,
                  2.37847173959480950e-03 * DAYS_PER_YEAR, 1.62824170038242295e-03 * DAYS_PER_YEAR};
  double vz[N] = {0.0, -6.90460016972063023e-05 * DAYS_PER_YEAR, 2.30417297573763929e-05 * DAYS_PER_YEAR,
                  -2.96589568540237556e-05 * DAYS_PER_YEAR, -9.51592254519715870e-05 * DAYS_PER_YEAR};
  double mass[N] = {solar_mass, 9.54791938424326609e-04 * solar_mass, 2.85885980666130812e-04 * solar_mass,
                    4.36624404335156298e-05 * solar_mass, 5.15138902046611451e-05 * solar_mass};
  // The Sun moves so that the system's momentum is zero.
  double px = 0.0, py = 0.0, pz = 0.0;
  for (int64_t i = 0; i < N; i++) {
    px += vx[i] * mass[i];
    py += vy[i] * mass[i];
    pz += vz[i] * mass[i];
  }
  vx[0] = -px / solar_mass;
  vy[0] = -py / solar_mass;
  vz[0] = -pz / solar_mass;
  double before = energy(N, x, y, z, vx, vy, vz, mass);
  for (int step = 0; step < 1000000; step++) advance(N, 0.01, x, y, z, vx, vy, vz, mass);
  double after = energy(N, x, y, z, vx, vy, vz, mass);
  printf("%lld %lld\n", (long long)(before * 1000000000.0), (long long)(after * 1000000000.0));
  return 0;
}
