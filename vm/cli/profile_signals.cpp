// Holding the profile's signals from the start (profile_signals.h). The earliest code of
// its own a process runs is its executable's preinit array: after the dynamic loader has
// mapped and relocated the libraries, before any of their constructors, long before
// main parses the command line (a loaded machine, or AddressSanitizer's start-up, can
// stretch that to tens of milliseconds). Only the kernel and the dynamic loader come
// before it, and no code of the process can hold a signal sent then.
#include "vm/cli/profile_signals.h"

#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "sampler/profiler.h"

namespace cli {

namespace {

// The signals held here (those the process did not start with blocked), until released.
std::atomic<uint64_t> g_held{0};

// In the preinit array no library is initialised yet (a sanitizer's interceptors of
// sigemptyset or sigprocmask among them): the mask is built by hand, in the kernel's
// layout (bit sig-1), and set with the raw system call.
void hold_profile_signals(int, char**, char**) {
  uint64_t mask = 0, before = 0;
  for (int sig : sampler::kProfileSignals) mask |= uint64_t(1) << (sig - 1);
  if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, &mask, &before, sizeof mask) == 0) g_held.store(mask & ~before);
}

[[gnu::section(".preinit_array"), gnu::used]] void (*const g_hold_at_start)(int, char**, char**) =
    hold_profile_signals;

}  // namespace

void release_profile_signals() {
  uint64_t held = g_held.exchange(0);
  if (held == 0) return;
  sigset_t set;
  sigemptyset(&set);
  for (int sig : sampler::kProfileSignals)
    if (held & (uint64_t(1) << (sig - 1))) sigaddset(&set, sig);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

}  // namespace cli
