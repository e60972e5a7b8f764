// The `minivm` command: a static executable with no C or C++ library whose first act is
// to block the profile's signals, and whose second is to exec the VM (`minivm-vm`, beside
// it) with the same arguments. The VM needs the dynamic loader, which maps and relocates
// its libraries for milliseconds before any of its code runs; a signal sent then (a
// SIGTERM right after the start, say) would take its default action and end the run
// with nothing written. Blocked here, it stays pending through execve until the
// profiler's handlers take it. The VM learns which signals this blocked (not those the
// process started with blocked) from MINIVM_HELD_SIGNALS (vm/cli/profile_signals.cpp).
#include <asm/unistd.h>

#include <cstdint>

#include "sampler/profile_signal_set.h"

namespace {

long sys(long n, long a = 0, long b = 0, long c = 0, long d = 0) {
  long r;
  register long r10 asm("r10") = d;
  asm volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
  return r;
}

template <typename T>
long arg(T* p) {
  return reinterpret_cast<long>(p);
}

[[noreturn]] void exit_with(int status) {
  for (;;) sys(__NR_exit_group, status);
}

long length(const char* s) {
  long n = 0;
  while (s[n] != '\0') n++;
  return n;
}

void put(const char* s) { sys(__NR_write, 2, arg(s), length(s)); }

// Writes v in decimal at out; returns the end.
char* decimal(char* out, uint64_t v) {
  char digits[24];
  int n = 0;
  do digits[n++] = char('0' + v % 10);
  while ((v /= 10) != 0);
  while (n > 0) *out++ = digits[--n];
  return out;
}

const char* error_text(long err) {
  switch (err) {
    case 2: return "no such file or directory";
    case 7: return "argument list too long";
    case 8: return "not an executable";
    case 12: return "out of memory";
    case 13: return "permission denied";
    case 36: return "file name too long";
    case 40: return "too many levels of symbolic links";
  }
  return nullptr;
}

[[noreturn]] void cannot_start(const char* path, long err) {
  char number[24];
  *decimal(number, uint64_t(err)) = '\0';
  put("minivm: cannot start the VM ");
  put(path);
  put(": ");
  const char* text = error_text(err);
  put(text != nullptr ? text : "error ");
  if (text == nullptr) put(number);
  put("\n");
  exit_with(127);
}

constexpr char kVm[] = "minivm-vm";
constexpr long kPathMax = 4096;

}  // namespace

extern "C" [[noreturn]] void minivm_launch(long* initial_sp) {
  uint64_t mask = sampler::profile_signal_bits(), before = 0;
  sys(__NR_rt_sigprocmask, 0 /* SIG_BLOCK */, arg(&mask), arg(&before), sizeof mask);
  long argc = initial_sp[0];
  char** argv = reinterpret_cast<char**>(initial_sp + 1);
  char** envp = argv + argc + 1;

  // The VM is beside this executable (symbolic links resolved), or beside argv[0].
  static char path[kPathMax + sizeof kVm];
  long n = sys(__NR_readlink, arg("/proc/self/exe"), arg(path), kPathMax);
  if (n <= 0 || n >= kPathMax) {
    n = argc > 0 ? length(argv[0]) : 0;
    if (n >= kPathMax) n = 0;
    for (long i = 0; i < n; i++) path[i] = argv[0][i];
  }
  while (n > 0 && path[n - 1] != '/') n--;
  for (long i = 0; i < long(sizeof kVm); i++) path[n + i] = kVm[i];

  // The environment, with MINIVM_HELD_SIGNALS first (an inherited one dropped).
  long envc = 0;
  while (envp[envc] != nullptr) envc++;
  auto** env = static_cast<char**>(__builtin_alloca(size_t(envc + 2) * sizeof(char*)));
  char held[sizeof sampler::kHeldSignalsVar + 24];
  char* end = held;
  for (const char* c = sampler::kHeldSignalsVar; *c != '\0'; c++) *end++ = *c;
  *decimal(end, mask & ~before) = '\0';
  long k = 0;
  env[k++] = held;
  for (long i = 0; i < envc; i++)
    if (sampler::held_signals_value(envp[i]) == nullptr) env[k++] = envp[i];
  env[k] = nullptr;

  long err = -sys(__NR_execve, arg(path), arg(argv), arg(env));
  cannot_start(path, err);
}

// The entry point: the kernel leaves argc, argv and the environment at rsp.
asm(R"(
  .text
  .globl _start
  .type _start, @function
_start:
  xor %ebp, %ebp
  mov %rsp, %rdi
  and $-16, %rsp
  call minivm_launch
  hlt
)");
