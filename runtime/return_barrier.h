// The return barrier of the stack watermark: one marked return slot per thread, whose
// real return pc is ThreadCore::barrier_target; the barrier (runtime/stubs.cpp) drops the
// mark when the marked frame returns. What the watermark is for, how the mark is set and
// dropped, the barrier's instructions and why it does not move the mark down:
// docs/architecture.md, "The stack watermark and the return barrier".
//
// Everything that reads a return pc from a Mini frame reads it through real_return_pc
// (the stack walker, the samplers' frame rows); only one slot per thread holds the entry,
// and barrier_target is updated before the slot, so the answer is right at every
// instruction. A thread interrupted inside the barrier is, logically, at its real return
// pc, in the frame it returns to: target_in_barrier says which pc that is.
#pragma once
#include <cstdint>

#include "runtime/thread.h"

namespace runtime {

// The barrier's entry (0 before generate_runtime_stubs).
uintptr_t return_barrier_entry();

// A return pc read from a Mini frame's return slot (or from a register a return sequence
// loaded it into), as the call that pushed it wrote it; `barrier_target` is the thread's
// ThreadCore::barrier_target (or a copy taken when it was interrupted).
inline uintptr_t real_return_pc(uintptr_t barrier_target, uintptr_t ra) {
  return ra == return_barrier_entry() && ra != 0 ? barrier_target : ra;
}
inline uintptr_t real_return_pc(const ThreadCore& t, uintptr_t ra) { return real_return_pc(t.barrier_target, ra); }

// For a thread interrupted at `pc` inside the barrier (with `r10` its r10): the real
// return pc it is on its way to.
uintptr_t target_in_barrier(const ThreadCore& t, uintptr_t pc, uintptr_t r10);

// Marks the frame whose return slot is `slot` (the caller of that frame and the
// `depth` - 1 frames below it are cached); at most one frame per thread is marked. Called
// by the thread itself, outside generated code.
void mark_return_slot(Thread* t, uintptr_t* slot, uint64_t depth);
// Unmarks the frame whose return slot is `slot` (which must hold the barrier's entry).
void unmark_return_slot(Thread* t, uintptr_t* slot);

}  // namespace runtime
