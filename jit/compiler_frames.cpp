// The compiled frame's entry, OSR entry and exit: prologue, osr_entry, emit_return.
#include "jit/compiler.h"

#include "runtime/runtime_calls.h"
#include "runtime/thread.h"

namespace jit::baseline {

void Compiler::prologue() {
  Label overflow = a.newLabel(), body = a.newLabel(), begin = a.newLabel();
  a.bind(begin);
  special.push_back({begin, frame_complete, "prologue"});
  mark(0, false);
  a.lea(rax, ptr(rsp, -int32_t(frame_bytes_ + 64)));
  a.cmp(rax, qword_ptr(r15, runtime::kThreadStackLimitOffset));
  a.jb(overflow);
  a.push(rbp);
  a.mov(rbp, rsp);
  a.sub(rsp, frame_bytes_);
  a.bind(frame_complete);
  if (extra() > 0) {
    a.xor_(eax, eax);
    for (int j = 0; j < extra(); j++) a.mov(home_local(m_->param_count + j), rax);
  }
  reload_locals(true);
  a.jmp(body);
  // Not enough stack: report from the caller's frame (anchor = caller), like the
  // interpreter's method entry.
  a.bind(overflow);
  a.mov(rax, qword_ptr(rsp));
  a.mov(qword_ptr(r15, runtime::kThreadAnchorPcOffset), rax);
  a.mov(qword_ptr(r15, runtime::kThreadAnchorFpOffset), rbp);
  a.lea(rax, ptr(rsp, 8));
  a.mov(qword_ptr(r15, runtime::kThreadAnchorSpOffset), rax);
  a.mov(rdi, r15);
  a.and_(rsp, -16);
  a.mov(rax, imm(reinterpret_cast<uint64_t>(&minivm_rt_throw_stack_overflow)));
  a.call(rax);
  a.ud2();
  a.bind(body);
}

// OSR entry for a loop header: entered by a jump from an interpreter frame that has been
// turned back into "just called" (rsp at the return pc, arguments above); builds the
// frame, takes the other locals from the thread's OSR buffer, and joins the loop.
void Compiler::osr_entry(uint32_t header_bci) {
  Label entry = a.newLabel(), complete = a.newLabel();
  a.bind(entry);
  osr_labels.push_back({header_bci, entry});
  mark(int32_t(header_bci), false);
  a.push(rbp);
  a.mov(rbp, rsp);
  a.sub(rsp, frame_bytes_);
  a.bind(complete);
  special.push_back({entry, complete, "prologue"});
  a.mov(rcx, qword_ptr(r15, runtime::kThreadOsrBufferOffset));
  for (int j = 0; j < extra(); j++) {
    int i = m_->param_count + j;
    a.mov(rax, qword_ptr(rcx, 8 * i));
    a.mov(home_local(i), rax);
  }
  reload_locals(true);
  a.jmp(scopes_.front().labels[header_bci]);
}

void Compiler::emit_return(int d, bool value, vm::Type type) {
  // From here (after the return poll) to the `ret` the frame goes away.
  Label begin = a.newLabel(), left = a.newLabel(), end = a.newLabel();
  a.bind(begin);
  struct Close {
    Assembler& a;
    Label end;
    ~Close() { a.bind(end); }
  } close{a, end};
  special.push_back({begin, left, "epilogue"});       // rbp still this frame's
  special.push_back({left, end, "epilogue_left"});    // rbp the caller's
  int n = m_->param_count;
  if (value) load(rax, expr(d - 1, type));
  a.leave();
  a.bind(left);
  if (!value) {
    if (n == 0)
      a.ret();
    else
      a.ret(imm(8 * n));
  } else if (n == 0) {
    a.pop(rcx);
    a.push(rax);
    a.push(rcx);
    a.ret();
  } else {
    // The result replaces argument 0; `ret` drops the return pc and the other arguments.
    a.mov(qword_ptr(rsp, 8 * n), rax);
    if (n == 1)
      a.ret();
    else
      a.ret(imm(8 * (n - 1)));
  }
}

}  // namespace jit::baseline
