// The safepoint polls' machine code, emitted by both code generators (the template
// interpreter and the JIT) through these functions, so the instructions, their registers
// and the pcs the poll table records cannot differ between them (runtime/poll.h).
#pragma once
#include <asmjit/x86.h>

#include "runtime/poll.h"
#include "runtime/stubs.h"
#include "runtime/thread.h"

namespace runtime {

// Where a poll sits, for the blob's poll table (code_blob.h): `test` is the instruction
// that decides (PollSite::pc), `resume` the pc the safepoint blob returns to, `stub` a
// branch poll's slow path (invalid for a trap poll).
struct PollLabels {
  asmjit::Label test, resume, stub;
};

inline PollLabels new_poll_labels(asmjit::x86::Assembler& a) { return {a.newLabel(), a.newLabel(), {}}; }
inline PollLabels new_branch_poll_labels(asmjit::x86::Assembler& a) {
  return {a.newLabel(), a.newLabel(), a.newLabel()};
}

// The trap poll (docs/architecture.md, section 3): r15 holds the Thread* (frame.h);
// clobbers r10 and the flags. The labels are the caller's to create
// (new_poll_labels), possibly before other labels it needs first: listings number
// labels in creation order.
inline void emit_poll(asmjit::x86::Assembler& a, const PollLabels& at) {
  using namespace asmjit::x86;
  a.mov(r10, qword_ptr(r15, kThreadPollWordOffset));
  a.bind(at.test);
  a.test(dword_ptr(r10), eax);
  a.bind(at.resume);
}

// The branch poll (HotSpot's return poll; docs/architecture.md, section 3): an armed
// thread reaches the safepoint blob through its stub (emit_poll_stub, out of line) rather
// than through a SIGSEGV. Clobbers the flags.
// A thread interrupted at the `ja` has compared already: the interruption sends it to
// the stub if it armed the thread (sampler/interruption.cpp).
inline void emit_branch_poll(asmjit::x86::Assembler& a, const PollLabels& at) {
  using namespace asmjit::x86;
  a.cmp(rsp, qword_ptr(r15, kThreadPollLimitOffset));
  a.bind(at.test);
  a.ja(at.stub);
  a.bind(at.resume);
}

// A branch poll's slow path: what the SIGSEGV handler does for a trap poll, in generated
// code. The thread is in_vm from its first instruction on (a sampler that interrupts it
// at that instruction sees the polling frame intact, at the poll: the generator describes
// the stub's pcs as the poll's); clobbers r10, which the blob restores as it found it.
inline void emit_poll_stub(asmjit::x86::Assembler& a, const PollLabels& at) {
  using namespace asmjit::x86;
  a.bind(at.stub);
  a.mov(r10d, asmjit::imm(int(ThreadState::in_vm)));
  a.xchg(byte_ptr(r15, kThreadStateOffset), r10b);  // a full fence, as set_state's store
  a.lea(r10, ptr(at.resume));
  a.mov(qword_ptr(r15, kThreadResumePcOffset), r10);
  a.mov(r10, asmjit::imm(safepoint_blob_entry()));
  a.jmp(r10);
}

}  // namespace runtime
