#include "runtime/stubs.h"

#include <asmjit/x86.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "runtime/code_blob.h"
#include "runtime/frame.h"
#include "runtime/frame_recorder.h"
#include "runtime/invariant.h"
#include "runtime/method.h"
#include "runtime/poll.h"
#include "runtime/return_barrier.h"
#include "runtime/thread.h"

namespace runtime {

using namespace asmjit;
using namespace asmjit::x86;

namespace {

using CallStubFn = int64_t (*)(Thread*, Method*, const int64_t*, uint64_t);
CallStubFn g_call_stub = nullptr;
uintptr_t g_safepoint_blob = 0;
uint32_t g_safepoint_blob_handler_return = 0;  // offset of the return from minivm_handle_poll
JitRuntime* g_jit = nullptr;
uintptr_t g_return_barrier = 0;
uint32_t g_return_barrier_after_load = 0;  // offset of the instruction after the load of the target
CodeBlob g_call_stub_blob, g_safepoint_blob_blob, g_return_barrier_blob;

// Installs the code as `blob`, with the frames its generator described (none for a blob no
// walker steps through).
void* finish(CodeHolder& code, const FrameRecorder* frames, CodeBlob& blob, const char* name, BlobKind kind) {
  void* fn = nullptr;
  if (g_jit->add(&fn, &code) != kErrorOk) {
    std::fprintf(stderr, "minivm: internal error: cannot install %s\n", name);
    std::abort();
  }
  blob.name = name;
  blob.kind = kind;
  blob.begin = reinterpret_cast<uintptr_t>(fn);
  blob.end = blob.begin + code.codeSize();
  if (frames != nullptr) frames->describe(blob, code);
  register_blob(&blob);
  return fn;
}

// Pushes `regs` in order, the first at [CFA + first_slot], recording where each is saved.
template <size_t N>
void push_saved(Assembler& a, FrameRecorder& frames, FrameRow frame, const Gp (&regs)[N], int32_t first_slot) {
  int32_t slot = first_slot;
  for (const Gp& r : regs) {
    a.push(r);
    frames.shape(frame.with_saved(Reg(r.id()), slot));
    slot -= 8;
  }
}

// int64_t call_stub(Thread* rdi, Method* rsi, const int64_t* args rdx, uint64_t nargs rcx)
void emit_call_stub(Assembler& a, FrameRecorder& frames) {
  static const Gp kSaved[] = {rbx, r12, r13, r14, r15};
  Label loop = a.newLabel(), done = a.newLabel();
  frames.shape(FrameRow::entry());
  push_saved(a, frames, frames.push_rbp_frame(), kSaved, -24);
  a.sub(rsp, 8);  // keep 16-byte alignment; also a slot the void case reads harmlessly
  a.mov(r15, rdi);
  a.mov(r12, qword_ptr(r15, kThreadDispatchTableOffset));
  a.mov(rbx, rsi);
  a.xor_(eax, eax);
  a.bind(loop);
  a.cmp(rax, rcx);
  a.jae(done);
  a.push(qword_ptr(rdx, rax, 3));
  a.inc(rax);
  a.jmp(loop);
  a.bind(done);
  a.call(qword_ptr(rbx, kMethodEntryOffset));
  // The callee replaced the arguments by its result (or by nothing, for void).
  a.mov(rax, qword_ptr(rsp));
  a.lea(rsp, ptr(rbp, -8 * int(std::size(kSaved))));  // at the last saved register
  for (int i = int(std::size(kSaved)) - 1; i >= 0; i--) a.pop(kSaved[i]);
  a.pop(rbp);
  frames.shape(FrameRow::entry());
  a.ret();
}

// Entered (not called) from the SIGSEGV handler with rip set here and the poll's resume
// pc in the thread. Builds a frame that looks like a call from the poll site, saves every
// register and the flags, and calls minivm_handle_poll(thread, blob_fp) in ordinary context.
// Its frame rows let an unwinder step from here to the polling frame (which resumes at an
// exact pc, not after a call: DWARF renders the blob as a signal frame).
void emit_safepoint_blob(Assembler& a, FrameRecorder& frames, Label handler_return) {
  static const Gp kSaved[] = {rax, rcx, rdx, rbx, rsi, rdi, r8, r9, r10, r11, r12, r13, r14, r15};
  constexpr int kXmmBytes = 16 * 16;
  // Nothing pushed yet: the polling frame's rsp is the CFA, and the return address is
  // the resume pc the trap left in the thread.
  frames.shape(FrameRow::entry().with_cfa(FrameRow::Cfa::rsp, 0).with_ra(FrameRow::Ra::at_resume_pc));
  a.push(qword_ptr(r15, kThreadResumePcOffset));
  frames.shape(FrameRow::entry());
  FrameRow frame = frames.push_rbp_frame();
  a.pushfq();  // at [CFA-24]
  push_saved(a, frames, frame, kSaved, -32);
  a.sub(rsp, kXmmBytes);
  for (int i = 0; i < 16; i++) a.movdqu(xmmword_ptr(rsp, i * 16), xmm(i));
  a.mov(rbx, rsp);
  a.and_(rsp, -16);
  a.mov(rdi, r15);
  a.mov(rsi, rbp);
  a.mov(rax, imm(reinterpret_cast<uint64_t>(&minivm_handle_poll)));
  a.call(rax);
  a.bind(handler_return);
  a.mov(rsp, rbx);
  for (int i = 0; i < 16; i++) a.movdqu(xmm(i), xmmword_ptr(rsp, i * 16));
  a.add(rsp, kXmmBytes);
  for (int i = int(std::size(kSaved)) - 1; i >= 0; i--) a.pop(kSaved[i]);
  a.popfq();
  a.pop(rbp);
  frames.shape(FrameRow::entry());  // only the return address is left, as at a function's entry
  // Back to Java (the trap set in_vm). A plain store: on x86 it is a release, and the
  // only waiter on this thread's state (a native-state walker) never sees in_vm.
  a.mov(byte_ptr(r15, kThreadStateOffset), imm(int(ThreadState::in_java)));
  a.ret();  // to the instruction after the poll
}

// The return barrier (docs/architecture.md, "The stack watermark and the return barrier"). It has
// no frame rows: no unwinder steps through it from a return slot, and a sampler that
// interrupts it takes the thread to be at its real return pc (target_in_barrier).
void emit_return_barrier(Assembler& a, Label entry, Label after_load) {
  a.bind(entry);
  a.mov(r10, qword_ptr(r15, kThreadBarrierTargetOffset));
  a.bind(after_load);
  a.mov(qword_ptr(r15, kThreadBarrierDepthOffset), 0);
  a.jmp(r10);
}

}  // namespace

void generate_runtime_stubs() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_jit = new JitRuntime();
    {
      CodeHolder code;
      code.init(g_jit->environment());
      Assembler a(&code);
      FrameRecorder frames(a);
      emit_call_stub(a, frames);
      g_call_stub =
          reinterpret_cast<CallStubFn>(finish(code, &frames, g_call_stub_blob, "call_stub", BlobKind::call_stub));
    }
    {
      CodeHolder code;
      code.init(g_jit->environment());
      Assembler a(&code);
      FrameRecorder frames(a);
      Label handler_return = a.newLabel();
      emit_safepoint_blob(a, frames, handler_return);
      g_safepoint_blob = reinterpret_cast<uintptr_t>(
          finish(code, &frames, g_safepoint_blob_blob, "safepoint_blob", BlobKind::safepoint_blob));
      g_safepoint_blob_handler_return = uint32_t(code.labelOffsetFromBase(handler_return));
    }
    {
      CodeHolder code;
      code.init(g_jit->environment());
      Assembler a(&code);
      Label entry = a.newLabel(), after_load = a.newLabel();
      emit_return_barrier(a, entry, after_load);
      uintptr_t begin = reinterpret_cast<uintptr_t>(
          finish(code, nullptr, g_return_barrier_blob, "return_barrier", BlobKind::return_barrier));
      g_return_barrier_after_load = uint32_t(code.labelOffsetFromBase(after_load));
      g_return_barrier = begin + code.labelOffsetFromBase(entry);
    }
  });
}

int64_t call_mini(Thread* t, Method* m, const int64_t* args) {
  MVM_ASSERT(t == Thread::current() && t->get_state() == ThreadState::in_java && t->core.dispatch_table != nullptr,
             "Mini code is entered on the thread's own stack, in Java, with its dispatch table set");
  return g_call_stub(t, m, args, m->param_count);
}

uintptr_t safepoint_blob_entry() { return g_safepoint_blob; }

uintptr_t return_barrier_entry() { return g_return_barrier; }

uintptr_t target_in_barrier(const ThreadCore& t, uintptr_t pc, uintptr_t r10) {
  // Until the target is loaded it is only in the thread; from then on r10 holds it (the
  // thread's copy may already name the next marked frame's).
  return pc < g_return_barrier_blob.begin + g_return_barrier_after_load ? t.barrier_target : r10;
}

const CodeBlob& call_stub_blob() { return g_call_stub_blob; }

uintptr_t poll_saved_register_address(uintptr_t anchor_sp, Reg r) {
  // The blob's own frame rows say where it pushed each register, relative to its CFA.
  const FrameRow* row = g_safepoint_blob_blob.frame_row_at(g_safepoint_blob + g_safepoint_blob_handler_return);
  return anchor_sp + uintptr_t(intptr_t(row->saved[size_t(r)]));
}

}  // namespace runtime
