// Tiered execution: methods start in the interpreter, which counts invocations and loop
// back-edges; hot methods are compiled by the baseline JIT on a background compiler
// thread, and a method's entry switches to compiled code atomically. A long-running
// interpreted loop moves into compiled code by on-stack replacement at its header.
#pragma once
#include <cstdint>

#include "jit/baseline_compiler.h"
#include "runtime/compiled_code.h"
#include "runtime/method.h"

namespace jit {

struct TieredOptions {
  JitOptions jit;
  uint32_t invocation_threshold = 1000;  // calls before a method is compiled
  uint32_t backedge_threshold = 10000;   // back-edges (per method) before compile + OSR
  bool synchronous = false;              // compile on the requesting thread (tests, --jit-sync)
  bool print_compilation = false;        // one stderr line per compilation and per OSR
};

// Installs the tier policy; must run before the interpreter is generated (it bakes the
// thresholds into the templates).
void enable_tiering(const TieredOptions& options);

// Compiles `m` (once) and switches its entry to the compiled code.
const runtime::CompiledCode* compile_and_install(runtime::Method* m, const JitOptions& options);

// Compiles `m` again (it must have compiled code) and switches its entry to the new code;
// returns the code it replaced, which no call enters from now on but threads may still
// run in (runtime/code_unloading.h decides when it can go).
const runtime::CompiledCode* recompile_and_install(runtime::Method* m, const JitOptions& options);

// --print-compilation: report compilations (and OSR transitions) on stderr.
void set_print_compilation(bool on);

// Methods compiled so far by tiering (for reports and tests).
uint64_t tiered_compilations();

}  // namespace jit
