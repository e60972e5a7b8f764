// The GDB JIT interface (gdb manual, "JIT Compilation Interface"): the process keeps
// `__jit_debug_descriptor`, a doubly linked list of in-memory object files, and calls
// `__jit_debug_register_code` after each change with the changed entry and what happened
// to it. gdb, when attached, breakpoints that function and reads the list while the
// process is stopped; without a debugger the call returns at once. LLDB implements the
// same protocol.
//
// The objects are made by jit/gdb_jit_elf.h, one per code range (jit/code_registration.h
// decides what each holds), and live until the code is freed. Registration and removal take one mutex, so the compiler thread, the code
// unloader and the main thread may change the list at once; gdb reads it only when every
// thread is stopped, and each change is complete before the notifying call.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace jit {

// `--gdb-jit`: whether code is described to debuggers. Off by default, since building and
// keeping one object per compiled method is not free (jit/README.md gives the numbers);
// enabled before any code is registered with the tools (jit/code_registration.h; the
// runtime's stubs exist earlier and are registered later), never disabled.
void gdb_jit_enable();
bool gdb_jit_enabled();

// Adds the object for the code starting at `begin` (replacing one registered there before)
// and notifies the debugger.
void gdb_jit_register(uintptr_t begin, std::vector<uint8_t> object);
// Removes the object for the code starting at `begin`, if any, and notifies the debugger.
void gdb_jit_unregister(uintptr_t begin);

// How many objects are registered and their total size in bytes (for tests and the cost
// measurement in jit/README.md).
struct GdbJitStats {
  size_t objects = 0, bytes = 0;
};
GdbJitStats gdb_jit_stats();

}  // namespace jit
