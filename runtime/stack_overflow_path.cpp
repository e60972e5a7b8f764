#include "runtime/stack_overflow_path.h"

#include "runtime/runtime_calls.h"
#include "runtime/thread.h"

namespace runtime {

using namespace asmjit::x86;

void emit_stack_overflow_path(Assembler& a, FrameRecorder& frames, const asmjit::Label& path, const FrameRow& after) {
  a.bind(path);
  frames.shape(FrameRow::entry());  // nothing pushed: the return pc is at [rsp]
  a.mov(rax, qword_ptr(rsp));
  a.mov(qword_ptr(r15, kThreadAnchorPcOffset), rax);
  a.mov(qword_ptr(r15, kThreadAnchorFpOffset), rbp);
  a.lea(rax, ptr(rsp, 8));
  a.mov(qword_ptr(r15, kThreadAnchorSpOffset), rax);
  a.mov(rdi, r15);
  // From the realignment on, rsp no longer says where the caller is; the anchor does.
  frames.shape(FrameRow::entry().with_cfa(FrameRow::Cfa::anchor_sp, 0));
  a.and_(rsp, -16);
  a.mov(rax, asmjit::imm(reinterpret_cast<uint64_t>(&minivm_rt_throw_stack_overflow)));
  a.call(rax);
  a.ud2();
  frames.shape(after);
}

}  // namespace runtime
