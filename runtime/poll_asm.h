// The safepoint poll's machine code, emitted by both code generators (the template
// interpreter and the JIT) through this one function, so the instruction pair, its
// registers and the pcs the poll table records cannot differ between them.
#pragma once
#include <asmjit/x86.h>

#include "runtime/thread.h"

namespace runtime {

// Where a poll sits, for the blob's poll table (code_blob.h): `test` is the pc that
// traps when the thread is armed, `resume` the pc the safepoint blob returns to.
struct PollLabels {
  asmjit::Label test, resume;
};

inline PollLabels new_poll_labels(asmjit::x86::Assembler& a) { return {a.newLabel(), a.newLabel()}; }

// `mov r10, [r15 + poll_word]; test [r10], eax` (poll.h), binding `at`: r15 holds the
// Thread* (frame.h); clobbers r10 and the flags. The labels are the caller's to create
// (new_poll_labels), possibly before other labels it needs first: listings number
// labels in creation order.
inline void emit_poll(asmjit::x86::Assembler& a, const PollLabels& at) {
  using namespace asmjit::x86;
  a.mov(r10, qword_ptr(r15, kThreadPollWordOffset));
  a.bind(at.test);
  a.test(dword_ptr(r10), eax);
  a.bind(at.resume);
}

}  // namespace runtime
