// --stress-unload: compiled code that comes and goes while the program runs, to test code
// unloading (and the samplers) under churn.
//
// A background thread (not a Mini thread) wakes every period and recompiles every method
// that has compiled code, switching its entry to the new code and retiring the old
// (jit::recompile_and_install), then runs a global safepoint at which the runtime frees
// each retired blob that no thread is running in or can return into and no pending
// sample request names (runtime/code_unloading.h). Code still in use waits for a later
// round. The period is wall time, so the churn does not depend on what the program does
// and works alike in tiered and --xcomp modes.
#pragma once
#include <cstdint>

#include "jit/baseline_compiler.h"

namespace jit {

struct StressUnloadOptions {
  JitOptions jit;                  // the options every recompilation uses
  uint64_t period_ns = 2'000'000;  // between rounds
};

// Starts the thread; it stops at VM exit (an exit hook).
void start_stress_unload(const StressUnloadOptions& options);

}  // namespace jit
