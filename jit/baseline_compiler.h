// The baseline JIT: one pass over a method's bytecode to x86-64 with asmjit.
//
// Compiled code obeys the Mini calling convention (runtime/frame.h) so interpreted and
// compiled frames call each other freely. Frame (rbp-chained, fixed size):
//
//      [rbp + 16 + 8*(n-1-i)]  argument i (argument 0 highest)
//      [rbp + 8]               return pc
//      [rbp + 0]               caller's rbp
//      [rbp - 8*(1+j)]         home of local n+j (locals beyond the arguments)
//      [rbp - 8*(1+e+k)]       inline slot k (e = extra locals): the locals of inlined
//                              bodies, then one per strip-mined counted loop (its strip's
//                              end)
//      [rbp - 8*(2+e+s+d)]     home of expression-stack depth d (s = inline slots)
//
// Registers: r15 Thread*; expression-stack depths 0..4 live in rsi, rdi, r8, r9, r11
// (deeper ones in their homes); up to three locals with the most (loop-weighted) uses
// live in rbx, r13, r14, saved to their homes around calls; rax, rcx, rdx, r10, xmm0-1
// are scratch. Polls (runtime::emit_branch_poll) sit at the header of every uncounted
// loop and at every return, before the frame is torn down; counted loops get none at
// their header unless JitOptions::counted_loop_polls. They are strip-mined instead
// (jit/strip_mining.cpp; docs/architecture.md, "Strip mining"), so a long counted loop, or
// a nest of short ones, still serves sample requests within a bound, while a loop shorter
// than the strip usually runs without a poll inside: the counted-loop bias the examples
// teach stays.
#pragma once
#include <string>
#include <vector>

#include "runtime/compiled_code.h"
#include "runtime/method.h"

namespace jit {

struct AsmLine;  // jit/listing.h

struct JitOptions {
  bool counted_loop_polls = false;  // --counted-loop-polls
  bool safepoint_debug_info = false;  // --debug-info=safepoints
  bool emit_polls = true;  // false only for --debug-no-polls, to measure what polls cost
  // --strip-mining=N: a counted loop's latch polls every N iterations (a power of two;
  // 0: never). 2^20 iterations is about a millisecond of a tight loop.
  uint32_t strip_mining_iters = 1u << 20;
};

// Compiles `m` and registers the result as a code blob; returns it (owned by the code
// cache, alive until free_compiled_code). With `listing`, fills it with the emitted
// instructions and their offsets (jit/listing.h). Does not switch the method's entry.
runtime::CompiledCode* compile_method(runtime::Method* m, const JitOptions& options,
                                      std::vector<AsmLine>* listing = nullptr);

// Frees code the runtime has unregistered (runtime/code_unloading.h decides when): its
// unwind info, its machine code (overwritten with int3, 0xCC, so a stale jump traps and
// a stale read sees garbage) and its metadata.
void free_compiled_code(const runtime::CompiledCode* code);

}  // namespace jit
