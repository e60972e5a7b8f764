#include "runtime/slowdown.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "runtime/clock.h"

namespace runtime {

uint64_t g_slowdown_turns_per_1024ns = 0;

void calibrate_slowdown() {
  if (g_slowdown_turns_per_1024ns != 0) return;
  using namespace asmjit;
  // The spin as a function of its own, uint64_t spin(uint64_t turns): the very
  // instructions the templates and compiled code run.
  JitRuntime rt;
  CodeHolder code;
  code.init(rt.environment());
  x86::Assembler a(&code);
  a.mov(x86::rcx, x86::rdi);
  emit_slowdown_spin(a, x86::rcx, x86::rdx);
  a.ret();
  using Spin = void (*)(uint64_t);
  Spin spin = nullptr;
  if (rt.add(&spin, &code) != kErrorOk) {
    std::fprintf(stderr, "minivm: internal error: cannot generate the slowdown's calibration\n");
    std::abort();
  }
  // The fastest of several short rounds: a round a preemption or an interrupt lengthened
  // says nothing about the chain.
  constexpr uint64_t kTurns = 1 << 18;
  uint64_t best = UINT64_MAX;
  spin(kTurns);  // warm: caches, the branch predictor, the clock
  for (int round = 0; round < 16; round++) {
    uint64_t start = monotonic_ns();
    spin(kTurns);
    best = std::min(best, monotonic_ns() - start);
  }
  g_slowdown_turns_per_1024ns = std::max<uint64_t>(1, kTurns * 1024 / std::max<uint64_t>(best, 1));
  rt.release(spin);
}

}  // namespace runtime
