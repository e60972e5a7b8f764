// Makes generated code known to the tools outside the VM: its CFI to LLVM libunwind with
// --native-frames (so native walks pass through Mini frames), an in-memory object with
// symbols, CFI and source lines to debuggers with --gdb-jit (jit/gdb_jit.h), and symbols
// with source lines to perf with --perf-map (jit/perf_map.h). The descriptions are the
// frame rows each generator recorded on its blob; nothing here reads machine code.
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "runtime/compiled_code.h"

namespace jit {

// A named sub-range of a blob (the interpreter's templates).
struct CodeRange {
  std::string name;
  size_t offset = 0, size = 0;
};

// The name every tool sees for a blob: `mini::fib` for compiled code, `minivm::stub::<name>`
// for an intrinsic stub, `minivm::<name>` for the interpreter, the call stub and the
// safepoint blob (the interpreter's templates: `minivm::interpreter::<template>`).
std::string symbol_name(const runtime::CodeBlob& blob);
// pc offset -> source line of compiled code, from its pc descs: the innermost scope's line
// (an inlined callee's own line), merged when equal, sorted by offset.
std::vector<std::pair<uint32_t, uint32_t>> line_table(const runtime::CompiledCode& code);

// Whether LLVM libunwind could be loaded (without it only perf is fed).
bool unwind_support_available();
// From now on, code is registered with LLVM libunwind, for native walks (--native-frames).
// Called before any code is registered. Off otherwise: loading the library and describing
// every blob to it took about 4% of an empty program's run, for walks nothing else makes.
void native_walks_enable();
bool native_walks_enabled();

// A new compiled method: unwind info with native walks, the debugger's object with
// --gdb-jit, a perf map line and jitdump records (with pc -> line info) with
// --perf-map. Called by compile_method.
void register_code_with_tools(const runtime::CompiledCode& code);
// Compiled code about to be freed: its unwind info and debugger object are withdrawn
// (perf keeps its records;
// jit/perf_map.h says why that is harmless).
void unregister_code_from_tools(const runtime::CompiledCode& code);
// The runtime's generated blobs present now (interpreter, call stub, safepoint blob,
// intrinsic stubs): unwind info (not for the frameless stubs), the debugger's object and
// perf records, each when enabled as above. The interpreter's templates name its symbols
// (minivm::interpreter::iadd, ...).
// Idempotent per blob. Called by the CLI after the interpreter is generated (and by tests).
void register_runtime_blobs_with_tools(const std::vector<CodeRange>& interpreter_templates);

}  // namespace jit
