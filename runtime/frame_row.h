// How to find the caller of the frame at a pc of generated code: one FrameRow for each
// run of pcs where the frame has one shape. The code generators write them as they emit
// the code (runtime/frame_recorder.h); the oracle sampler reads them in a signal handler,
// and jit/ renders them as DWARF CFI for libunwind, perf and debuggers. Nobody else
// works out a frame's shape from the machine code.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

#include "runtime/invariant.h"

namespace runtime {

// x86-64 general registers, numbered by their encoding (asmjit's Gp::id()).
enum class Reg : uint8_t { rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8, r9, r10, r11, r12, r13, r14, r15 };
inline constexpr int kRegCount = 16;

// From `offset` on: the canonical frame address (CFA: the caller's sp, 8 above the return
// address at a call's target) is computed by `cfa`, plus `cfa_offset`; the return address
// is where `ra` says; the caller's rbp where `rbp` says; and any other register the code
// saved is at [CFA + saved[reg]] (0: not saved, still the caller's).
struct FrameRow {
  enum class Cfa : uint8_t {
    rsp,              // CFA = rsp + cfa_offset
    rbp,              // CFA = rbp + cfa_offset
    r14,              // CFA = r14 + cfa_offset (an interpreter return: r14 = the locals)
    r14_less_params,  // CFA = r14 + cfa_offset - 8 * param_count of the Method* in rbx
                      // (the interpreter's method entry while it pushes the extra locals)
    anchor_sp,        // CFA = the thread's anchor sp (a stack-overflow path, after it
                      // realigned rsp to call the runtime)
  };
  enum class Ra : uint8_t {
    at_cfa,           // [CFA + ra_offset]
    at_rsp,           // [rsp]
    in_rax,
    in_rcx,
    at_resume_pc,     // the thread's resume pc (the safepoint blob's first instruction)
  };
  enum class Rbp : uint8_t {
    same,             // rbp is still the caller's
    saved,            // at [CFA + rbp_offset]
    in_rdx,
  };
  uint32_t offset = 0;
  Cfa cfa = Cfa::rsp;
  Ra ra = Ra::at_cfa;
  Rbp rbp = Rbp::same;
  int32_t cfa_offset = 8;
  int32_t ra_offset = -8;
  int32_t rbp_offset = 0;
  std::array<int16_t, kRegCount> saved{};  // by Reg; rsp and rbp are never listed here

  bool same_shape(const FrameRow& o) const {
    return cfa == o.cfa && ra == o.ra && rbp == o.rbp && cfa_offset == o.cfa_offset && ra_offset == o.ra_offset &&
           rbp_offset == o.rbp_offset && saved == o.saved;
  }

  // At a call's target, nothing pushed: CFA = rsp+8, return address at [CFA-8].
  static FrameRow entry() { return FrameRow{}; }
  // Right after `push rbp`: CFA = rsp+16, the caller's rbp at [CFA-16].
  static FrameRow rbp_pushed() { return entry().with_cfa(Cfa::rsp, 16).with_saved_rbp(-16); }
  // After `mov rbp, rsp`: CFA = rbp+16, the caller's rbp at [CFA-16].
  static FrameRow rbp_frame() { return entry().with_cfa(Cfa::rbp, 16).with_saved_rbp(-16); }

  FrameRow& with_cfa(Cfa c, int32_t off) { return cfa = c, cfa_offset = off, *this; }
  FrameRow& with_ra(Ra r, int32_t off = 0) { return ra = r, ra_offset = off, *this; }
  FrameRow& with_saved_rbp(int32_t off) { return rbp = Rbp::saved, rbp_offset = off, *this; }
  FrameRow& with_rbp_in_rdx() { return rbp = Rbp::in_rdx, rbp_offset = 0, *this; }
  FrameRow& with_saved(Reg r, int32_t off) {
    MVM_ASSERT(r != Reg::rsp && r != Reg::rbp,
               "a frame row's saved registers are neither rsp (the CFA) nor rbp (which has its own rule)");
    return saved[size_t(r)] = int16_t(off), *this;
  }
};

}  // namespace runtime
