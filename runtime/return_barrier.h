// The return barrier: a stack watermark made by return-address marking, so that a thread
// sampled again with most of its stack unchanged walks only what changed (the same idea
// collectors use to scan stacks incrementally).
//
// After a walk at a poll, the sampler caches what it found for every frame below the top
// one and marks the top frame: its return slot ([fp + 8]) gets the barrier's entry in place
// of its real return pc (kept in ThreadCore::barrier_target). While the marked frame lives,
// every frame below it is exactly as cached: each is suspended at its call. The next walk
// stops at the marked frame and takes the rest from the cache. When the marked frame
// returns, it lands in the barrier, which drops the mark and jumps to the real return pc.
// The cache stays: the next walk finds the frames that are where they were by comparing
// them with it (sampler/poll_client.cpp, a frame-pointer walk of two loads a frame).
//
// The barrier does not move the mark down to the frame it returns into, though that would
// keep the watermark exact for longer: a stack that unwinds between samples (a recursion
// that returns and descends again) would run the barrier once per frame, each a
// mispredicted return, about 5 µs a sample at a depth of 500, where the comparison costs
// under one.
//
// The barrier, in generated code (runtime/stubs.cpp), clobbering only r10 (scratch in the
// Mini calling convention; a returned value is on the stack):
//
//     entry:  mov r10, [r15 + barrier_target]   ; the real return pc, into the caller
//             mov qword [r15 + barrier_depth], 0  ; no frame is marked
//             jmp r10
//
// Everything that reads a return pc from a Mini frame reads it through real_return_pc
// (the stack walker, the samplers' frame rows); only one slot per thread holds the entry,
// and barrier_target is updated before the slot, so the answer is right at every
// instruction. A thread interrupted inside the barrier is, logically, at its real return
// pc in E: target_in_barrier says which pc that is.
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
