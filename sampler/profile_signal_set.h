// The signals whose handlers write the profile (dump_thread.cpp): SIGINT, SIGTERM and
// SIGPIPE end the run, SIGUSR2 writes it and goes on. Their default actions would end
// the run with nothing written, so they are blocked from the process's first
// instruction (vm/cli/launcher) until start_profiler. A header of its own, with nothing
// but <signal.h>, because the launcher is built without the C and C++ libraries.
#pragma once
#include <signal.h>

#include <cstdint>

namespace sampler {

inline constexpr int kProfileSignals[] = {SIGINT, SIGTERM, SIGPIPE, SIGUSR2};

// The set in the kernel's layout (bit sig - 1), as rt_sigprocmask takes it.
constexpr uint64_t profile_signal_bits() {
  uint64_t bits = 0;
  for (int sig : kProfileSignals) bits |= uint64_t(1) << (sig - 1);
  return bits;
}

// How the launcher tells the VM which of them it blocked: an environment entry
// MINIVM_HELD_SIGNALS=<the mask in decimal>.
inline constexpr char kHeldSignalsVar[] = "MINIVM_HELD_SIGNALS=";

// The value of environment entry `entry` when it is kHeldSignalsVar's, else nullptr.
constexpr const char* held_signals_value(const char* entry) {
  for (const char* c = kHeldSignalsVar; *c != '\0'; c++, entry++)
    if (*entry != *c) return nullptr;
  return entry;
}

}  // namespace sampler
