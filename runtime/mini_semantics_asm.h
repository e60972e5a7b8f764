// Machine-code sequences for Mini semantics that both code generators (the template
// interpreter and the JIT) need word for word, so they cannot drift apart.
#pragma once
#include <asmjit/x86.h>

#include "runtime/invariant.h"

namespace runtime {

// rax = int(x): toward zero; NaN -> 0; out of range saturates to the int limits
// (LANGUAGE.md). cvttsd2si answers MIN for NaN and out-of-range values, which is fixed
// up here. Clobbers rcx and xmm1, so `x` is another register (the sign test compares it
// with xmm1 set to zero).
inline void emit_float_to_int(asmjit::x86::Assembler& a, const asmjit::x86::Xmm& x) {
  using namespace asmjit::x86;
  MVM_ASSERT(x.id() != xmm1.id(), "float-to-int's operand is not xmm1, the zero it is compared with");
  asmjit::Label done = a.newLabel(), nan = a.newLabel();
  a.cvttsd2si(rax, x);
  a.mov(rcx, asmjit::imm(INT64_MIN));
  a.cmp(rax, rcx);
  a.jne(done);
  a.ucomisd(x, x);
  a.jp(nan);
  a.xorps(xmm1, xmm1);
  a.ucomisd(x, xmm1);
  a.jbe(done);  // negative: MIN is right
  a.not_(rax);  // ~MIN = MAX
  a.jmp(done);
  a.bind(nan);
  a.xor_(eax, eax);
  a.bind(done);
}

}  // namespace runtime
