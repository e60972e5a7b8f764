// Holding the profile's signals from the start (profile_signals.h). The `minivm` launcher
// (launcher/launcher.cpp) blocks them with its first instruction and execs this VM; it
// says in MINIVM_HELD_SIGNALS which it blocked (the process may have started with some
// blocked, which stay so). Started directly, as `minivm-vm`, the VM blocks them itself
// as early as its own code can: in its executable's preinit array, after the dynamic
// loader has mapped and relocated the libraries, before any of their constructors, long
// before main parses the command line (a loaded machine, or AddressSanitizer's start-up,
// can stretch that to tens of milliseconds).
#include "vm/cli/profile_signals.h"

#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "sampler/profile_signal_set.h"

namespace cli {

namespace {

// The signals held here (those the process did not start with blocked), until released.
std::atomic<uint64_t> g_held{0};

// The launcher's MINIVM_HELD_SIGNALS (a decimal mask), or 0.
uint64_t held_by_launcher(char** envp) {
  for (char** e = envp; e != nullptr && *e != nullptr; e++) {
    const char* c = sampler::held_signals_value(*e);
    if (c == nullptr) continue;
    uint64_t v = 0;
    for (; *c >= '0' && *c <= '9'; c++) v = v * 10 + uint64_t(*c - '0');
    return v & sampler::profile_signal_bits();
  }
  return 0;
}

// In the preinit array no library is initialised yet (a sanitizer's interceptors of
// getenv, sigemptyset or sigprocmask among them): the environment is read and the mask
// built by hand, in the kernel's layout (bit sig-1), and set with the raw system call.
void hold_profile_signals(int, char**, char** envp) {
  uint64_t mask = sampler::profile_signal_bits(), before = 0;
  uint64_t held = held_by_launcher(envp);
  if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, &mask, &before, sizeof mask) == 0) held |= mask & ~before;
  g_held.store(held);
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
