// The allocation fast path's machine code, emitted by both code generators (the template
// interpreter's and the JIT's `newarray`) through this one function: a bump of the
// thread's TLAB (runtime/heap.h) and the array's header. TLAB memory is zeroed when the
// runtime hands it out, so the elements need no stores here.
#pragma once
#include <asmjit/x86.h>

#include "runtime/heap.h"
#include "runtime/invariant.h"
#include "runtime/thread.h"

namespace runtime {

// result <- a new array of `length` elements of `kind` (an immediate or a register
// holding the ArrayKind), or a jump to `slow` (a negative or large length, or a full
// TLAB) with `length` and `kind` unchanged. r15 holds the Thread*. Clobbers `result`,
// `scratch` and the flags; the three registers differ, and from a kind register (each
// is written while another is still needed).
inline void emit_allocate_array(asmjit::x86::Assembler& a, const asmjit::x86::Gp& result,
                                const asmjit::x86::Gp& length, const asmjit::Operand& kind,
                                const asmjit::x86::Gp& scratch, const asmjit::Label& slow) {
  using namespace asmjit::x86;
  MVM_ASSERT(result.id() != length.id() && result.id() != scratch.id() && length.id() != scratch.id() &&
                 (!kind.isReg() || (kind.id() != result.id() && kind.id() != length.id() && kind.id() != scratch.id())),
             "the allocation fast path's result, length, scratch and kind registers are four different registers");
  static_assert(kArrayLengthOffset == 8 && sizeof(Array) == 16);
  a.cmp(length, kMaxTlabLength);
  a.ja(slow);  // unsigned: a negative length is huge
  a.lea(scratch, ptr(length, length, 0));  // 2n, then 8 * 2n = 16n: shl below
  a.shl(scratch, 2);                       // 8n
  a.add(scratch, int32_t(sizeof(Array) + kObjectAlignment - 1));
  a.and_(scratch, -int32_t(kObjectAlignment));
  a.mov(result, qword_ptr(r15, kThreadTlabTopOffset));
  a.add(scratch, result);  // the new top
  a.cmp(scratch, qword_ptr(r15, kThreadTlabEndOffset));
  a.ja(slow);
  a.mov(qword_ptr(r15, kThreadTlabTopOffset), scratch);
  // kind and the reserved word (0) in one store, then the length.
  if (kind.isImm())
    a.mov(qword_ptr(result), kind.as<asmjit::Imm>());
  else
    a.mov(qword_ptr(result), kind.as<Gp>().r64());
  a.mov(qword_ptr(result, kArrayLengthOffset), length);
}

}  // namespace runtime
