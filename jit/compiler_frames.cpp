// The compiled frame's entry, OSR entry and exit: prologue, osr_entry, emit_return.
// Each records the frame's shape at the instruction that changes it (runtime::FrameRecorder).
#include "jit/compiler.h"

#include "runtime/runtime_calls.h"
#include "runtime/stack_overflow_path.h"
#include "runtime/thread.h"

namespace jit::baseline {

void Compiler::prologue() {
  using runtime::FrameRow;
  code_begin_ = a.newLabel();
  stack_overflow_ = a.newLabel();
  a.bind(code_begin_);
  frames.range(code_begin_, frame_complete, runtime::PcRangeKind::prologue);
  frames.shape(FrameRow::entry());
  mark(0, false);
  a.lea(rax, ptr(rsp, -int32_t(frame_bytes_ + 64)));
  a.cmp(rax, qword_ptr(r15, runtime::kThreadStackLimitOffset));
  a.jb(stack_overflow_);
  frames.push_rbp_frame();
  a.sub(rsp, frame_bytes_);
  a.bind(frame_complete);
  if (extra() > 0) {
    a.xor_(eax, eax);
    for (int j = 0; j < extra(); j++) a.mov(home_local(m_->param_count + j), rax);
  }
  reset_strips(scopes_.front());
  reload_locals(true);
}

// Each stub's pcs are its poll's: the same scope and bci, the frame complete (rbp this
// frame's, rsp where it was at the poll), so a thread interrupted at a stub's first
// instruction, still in Java, is sampled at its poll.
void Compiler::poll_stubs() {
  InlineScope* saved = sc_;
  for (const PollAt& p : polls) {
    sc_ = p.scope;
    frames.shape(runtime::FrameRow::rbp_frame());
    mark(p.bci, true);
    runtime::emit_poll_stub(a, p.labels);
  }
  sc_ = saved;
}

void Compiler::cold_paths() {
  InlineScope* saved = sc_;
  for (ColdPath& p : cold_) {
    sc_ = p.scope;
    outer_types_ = p.outer;
    a.bind(p.entry);
    frames.shape(runtime::FrameRow::rbp_frame());
    mark(p.bci, true);
    p.emit();
  }
  sc_ = saved;
  outer_types_.clear();
}

// Not enough stack: report from the caller's frame (anchor = caller), like the
// interpreter's method entry. Out of line, after the body, so that a call falls through
// from its prologue into the body.
void Compiler::stack_overflow_path() {
  mark(0, false);  // the method's entry, as at the prologue
  runtime::emit_stack_overflow_path(a, frames, stack_overflow_, runtime::FrameRow::rbp_frame());
}

// OSR entry for a loop header: entered by a jump from an interpreter frame that has been
// turned back into "just called" (rsp at the return pc, arguments above); builds the
// frame, takes the other locals from the thread's OSR buffer, and joins the loop.
void Compiler::osr_entry(uint32_t header_bci) {
  using runtime::FrameRow;
  Label entry = a.newLabel(), complete = a.newLabel();
  a.bind(entry);
  frames.shape(FrameRow::entry());
  osr_labels.push_back({header_bci, entry});
  mark(int32_t(header_bci), false);
  frames.push_rbp_frame();
  a.sub(rsp, frame_bytes_);
  a.bind(complete);
  frames.range(entry, complete, runtime::PcRangeKind::prologue);
  a.mov(rcx, qword_ptr(r15, runtime::kThreadOsrBufferOffset));
  for (int j = 0; j < extra(); j++) {
    int i = m_->param_count + j;
    a.mov(rax, qword_ptr(rcx, 8 * i));
    a.mov(home_local(i), rax);
  }
  reset_strips(scopes_.front());  // the first latch starts a strip from the variable OSR brought
  reload_locals(true);
  loop_products_at_osr(header_bci);
  a.jmp(scopes_.front().labels[header_bci]);
}

void Compiler::emit_return(int d, bool value, vm::Type type) {
  using runtime::FrameRow;
  // From here (after the return poll) to the `ret` the frame goes away.
  Label begin = a.newLabel(), left = a.newLabel(), end = a.newLabel();
  a.bind(begin);
  struct Close {
    Assembler& a;
    runtime::FrameRecorder& frames;
    Label end;
    ~Close() {
      a.bind(end);
      frames.shape(FrameRow::rbp_frame());  // the code after the return is in the frame again
    }
  } close{a, frames, end};
  frames.range(begin, left, runtime::PcRangeKind::epilogue);
  frames.range(left, end, runtime::PcRangeKind::epilogue_left);
  int n = m_->param_count;
  // The result replaces argument 0 (runtime::frame_result_offset), stored
  // while rbp is still this frame's: one store, where a copy through rax and a store
  // after `leave` would be two instructions on every call's path.
  if (value && n > 0)
    move(qword_ptr(rbp, runtime::frame_result_offset(n)), expr(d - 1, type));
  else if (value)
    load(rax, expr(d - 1, type));
  a.leave();
  a.bind(left);
  frames.shape(FrameRow::entry());  // frame gone, rbp the caller's again
  if (!value) {
    if (n == 0)
      a.ret();
    else
      a.ret(imm(8 * n));
  } else if (n == 0) {
    // The result goes under the return pc, which waits in rcx meanwhile.
    a.pop(rcx);
    frames.shape(FrameRow::entry().with_cfa(FrameRow::Cfa::rsp, 0).with_ra(FrameRow::Ra::in_rcx));
    a.push(rax);
    frames.shape(FrameRow::entry().with_ra(FrameRow::Ra::in_rcx));
    a.push(rcx);
    frames.shape(FrameRow::entry().with_cfa(FrameRow::Cfa::rsp, 16).with_ra(FrameRow::Ra::at_cfa, -16));
    a.ret();
  } else {
    // The result is in argument 0's slot; `ret` drops the return pc and the other arguments.
    if (n == 1)
      a.ret();
    else
      a.ret(imm(8 * (n - 1)));
  }
}

}  // namespace jit::baseline
