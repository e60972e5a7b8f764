// InterpMasm: the interpreter's macro assembler. The fixed register roles and the
// frame layout (runtime/frame.h) are used only through these helpers, so every
// template speaks the same conventions.
#pragma once
#include <asmjit/x86.h>

#include <cstdint>
#include <vector>

#include "runtime/code_blob.h"
#include "runtime/frame_recorder.h"
#include "runtime/poll_asm.h"

namespace interp {

namespace x86 = asmjit::x86;

// Fixed register roles while interpreting (HotSpot x86 style).
inline const x86::Gp kThread = x86::r15;    // Thread*
inline const x86::Gp kBcp = x86::r13;       // current bytecode
inline const x86::Gp kLocals = x86::r14;    // address of local 0; local i at [kLocals - 8*i]
inline const x86::Gp kDispatch = x86::r12;  // dispatch table: 256 template addresses
// Top-of-stack caching: the top expression value lives in rax, the rest in memory from
// [rsp] up. At depth 0 rax holds junk, which a push stores harmlessly (the memory stack
// is "junk, v0, ..., v(d-2)" and rax is v(d-1)). So a push is `push rax; mov rax, v`, a
// pop is `pop rax`, and no template needs to know the depth.
inline const x86::Gp kTos = x86::rax;

class InterpMasm {
 public:
  explicit InterpMasm(x86::Assembler& a) : a(a), frames(a) {}
  x86::Assembler& a;
  runtime::FrameRecorder frames;  // frame shapes and special pc ranges, as emitted

  // Operand access relative to bcp.
  x86::Mem u16_operand(int at = 1) const { return x86::word_ptr(kBcp, at); }
  x86::Mem i32_operand(int at = 1) const { return x86::dword_ptr(kBcp, at); }
  // The address of local `index_reg` after `index_reg` was negated: [kLocals + idx*8].
  x86::Mem local_slot(const x86::Gp& neg_index) const { return x86::qword_ptr(kLocals, neg_index, 3); }
  // Loads local index from the u16 operand at `at` into `reg` (negated for local_slot).
  void load_local_index(const x86::Gp& reg, int at = 1);

  // Advances bcp by `length` and jumps to the next template.
  void dispatch_next(int length);
  // Takes the branch whose i32 offset is at `offset_at`: forward branches just go,
  // backward branches (offset <= 0, loops) poll for a safepoint first.
  void branch(int offset_at);
  // A safepoint poll at the current bcp, registered as a poll site.
  void poll();

  // Calls a runtime stack helper `int64_t* fn(Thread*, bcp, sp, Method*)` with the
  // anchor set to this frame: spills the cached top, and afterwards takes the
  // returned stack pointer and pops the new top into rax.
  void call_stack_helper(void* fn);
  // Calls a runtime function that reports an error and does not return, with the
  // anchor set to this frame; rsi and rdx must already hold its arguments.
  void call_throw(void* fn);
  // Sets the thread's anchor to this frame, with pc = `resume`.
  void set_anchor(const asmjit::Label& resume);
  void clear_anchor();

  // The array templates' shared failure paths (gen_array_failures), bound after every
  // bytecode's template: index in rcx, array (or string) in r8.
  asmjit::Label index_out_of_bounds = a.newLabel();
  asmjit::Label null_array_index = a.newLabel(), null_string_index = a.newLabel();

  // An implicit null check (runtime/code_blob.h, ImplicitNull): the next instruction
  // reads through a reference at a displacement below kImplicitNullLimit, so on null it
  // faults and the SIGSEGV handler resumes at `handler` with the registers as they are.
  void implicit_null_check(const asmjit::Label& handler);

  std::vector<runtime::PollLabels> polls;
  struct ImplicitNullLabels {
    asmjit::Label at, handler;
  };
  std::vector<ImplicitNullLabels> implicit_nulls;
  asmjit::Label left_frame;          // scratch for the return templates' ranges
};

}  // namespace interp
