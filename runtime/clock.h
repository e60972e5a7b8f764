// The monotonic clock the runtime times things with (pauses, time to safepoint, code
// unloading rounds, the slowdown's calibration), in nanoseconds.
#pragma once
#include <time.h>

#include <cstdint>

namespace runtime {

inline uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

}  // namespace runtime
