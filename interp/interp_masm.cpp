#include "interp/interp_masm.h"

#include "runtime/frame.h"
#include "runtime/method.h"
#include "runtime/thread.h"
#include "runtime/tiering.h"

namespace interp {

using namespace asmjit;
using namespace asmjit::x86;
using namespace runtime;

void InterpMasm::load_local_index(const Gp& reg, int at) {
  a.movzx(reg.r32(), u16_operand(at));
  a.neg(reg.r64());
}

void InterpMasm::dispatch_next(int length) {
  // r10, not rax: rax holds the cached top of stack across dispatch.
  a.movzx(r10d, byte_ptr(kBcp, length));
  if (length != 0) a.add(kBcp, length);
  a.jmp(qword_ptr(kDispatch, r10, 3));
}

void InterpMasm::branch(int offset_at) {
  Label backward = a.newLabel(), hot = a.newLabel(), osr = a.newLabel(), after = a.newLabel();
  a.movsxd(rdx, dword_ptr(kBcp, offset_at));
  a.test(rdx, rdx);
  a.jle(backward);
  a.add(kBcp, rdx);
  dispatch_next(0);

  // A loop's back-edge: poll, count, and past the threshold ask the tier policy.
  a.bind(backward);
  poll();  // preserves every register
  a.add(kBcp, rdx);
  if (runtime::tier_thresholds().backedges == UINT32_MAX) {  // --xint: nothing to count for
    dispatch_next(0);
    return;
  }
  a.mov(rcx, qword_ptr(rbp, kInterpFrameMethodOffset));
  a.add(dword_ptr(rcx, kMethodBackedgesOffset), 1);
  a.cmp(dword_ptr(rcx, kMethodBackedgesOffset), imm(int32_t(runtime::tier_thresholds().backedges)));
  a.jae(hot);
  dispatch_next(0);

  a.bind(hot);
  a.push(rax);  // the cached top (junk: loop headers have an empty stack)
  set_anchor(after);
  a.mov(rdi, kThread);
  a.mov(rsi, rcx);
  a.mov(rdx, kBcp);
  a.mov(rcx, kLocals);
  a.mov(rbx, rsp);
  a.and_(rsp, -16);
  a.mov(rax, imm(reinterpret_cast<uint64_t>(&minivm_rt_hot_backedge)));
  a.call(rax);
  a.bind(after);
  a.mov(rsp, rbx);
  clear_anchor();
  a.test(rax, rax);
  a.jnz(osr);
  a.pop(rax);
  dispatch_next(0);

  // On-stack replacement: the locals are in the thread's OSR buffer. Turn this frame
  // back into "just called" (return pc right below the arguments, caller's rbp
  // restored) and jump to the compiled loop header's OSR entry, which builds its own
  // frame. Everything is read before rsp moves above the old frame.
  a.bind(osr);
  a.mov(rcx, qword_ptr(rbp, kFrameReturnPcOffset));
  a.mov(rdx, qword_ptr(rbp, kFrameSavedFpOffset));
  a.mov(r8, qword_ptr(rbp, kInterpFrameMethodOffset));
  a.movzx(r8d, word_ptr(r8, kMethodParamCountOffset));
  a.neg(r8);
  a.lea(rsp, ptr(kLocals, r8, 3));
  // Until the jump the return pc waits in rcx and the caller's rbp in rdx.
  using runtime::FrameRow;
  frames.shape(FrameRow::entry().with_ra(FrameRow::Ra::in_rcx).with_rbp_in_rdx());
  a.mov(qword_ptr(rsp), rcx);
  frames.shape(FrameRow::entry().with_rbp_in_rdx());
  a.mov(rbp, rdx);
  // The interpreted frame is gone and the compiled one not yet built: a sample here is the
  // method at its loop header (r13) over the caller (runtime::PcRange).
  Label left = a.newLabel(), jumped = a.newLabel();
  a.bind(left);
  frames.shape(FrameRow::entry());
  a.jmp(rax);
  a.bind(jumped);
  frames.range(left, jumped, runtime::PcRangeKind::interp_osr_left);
  frames.shape(FrameRow::rbp_frame());
}

void InterpMasm::poll() {
  runtime::PollLabels labels = runtime::new_poll_labels(a);
  // The walker reads bcp from the frame, so publish it before the poll can trap.
  a.mov(qword_ptr(rbp, kInterpFrameBcpOffset), kBcp);
  runtime::emit_poll(a, labels);
  polls.push_back(labels);
}

void InterpMasm::set_anchor(const Label& resume) {
  a.mov(qword_ptr(rbp, kInterpFrameBcpOffset), kBcp);
  a.lea(r11, ptr(resume));
  a.mov(qword_ptr(kThread, kThreadAnchorPcOffset), r11);
  a.mov(qword_ptr(kThread, kThreadAnchorFpOffset), rbp);
  a.mov(qword_ptr(kThread, kThreadAnchorSpOffset), rsp);  // last: sp != 0 publishes the anchor
}

void InterpMasm::clear_anchor() { a.mov(qword_ptr(kThread, kThreadAnchorSpOffset), 0); }

void InterpMasm::call_stack_helper(void* fn) {
  Label after = a.newLabel();
  a.push(rax);  // the whole expression stack in memory for the helper
  set_anchor(after);
  a.mov(rdi, kThread);
  a.mov(rsi, kBcp);
  a.mov(rdx, rsp);
  a.mov(rcx, qword_ptr(rbp, kInterpFrameMethodOffset));
  // Keep one free slot below sp (a helper may push a value there) and align for C.
  a.sub(rsp, 16);
  a.and_(rsp, -16);
  a.mov(rax, imm(reinterpret_cast<uint64_t>(fn)));
  a.call(rax);
  a.bind(after);
  clear_anchor();
  a.mov(rsp, rax);
  a.pop(rax);  // the new top of stack back in its register
}

void InterpMasm::implicit_null_check(const asmjit::Label& handler) {
  asmjit::Label at = a.newLabel();
  a.bind(at);
  implicit_nulls.push_back({at, handler});
}

void InterpMasm::call_throw(void* fn) {
  Label after = a.newLabel();
  set_anchor(after);
  a.mov(rdi, kThread);
  a.and_(rsp, -16);
  a.mov(rax, imm(reinterpret_cast<uint64_t>(fn)));
  a.call(rax);
  a.bind(after);
  a.ud2();  // never returns
}

}  // namespace interp
