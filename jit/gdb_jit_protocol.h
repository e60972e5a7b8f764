// The GDB JIT interface's protocol (gdb/jit.h in gdb's sources documents the names, layouts
// and version): the descriptor gdb reads and the function it breakpoints, both found by
// name in the executable's symbol table. Defined in jit/gdb_jit.cpp; the tests read the
// list through the same declarations, as gdb does.
#pragma once
#include <cstdint>

extern "C" {

enum JitAction : uint32_t { JIT_NOACTION = 0, JIT_REGISTER_FN = 1, JIT_UNREGISTER_FN = 2 };

struct jit_code_entry {
  jit_code_entry* next_entry;
  jit_code_entry* prev_entry;
  const char* symfile_addr;
  uint64_t symfile_size;
};

struct jit_descriptor {
  uint32_t version;
  uint32_t action_flag;  // a JitAction
  jit_code_entry* relevant_entry;
  jit_code_entry* first_entry;
};

void __jit_debug_register_code();
extern jit_descriptor __jit_debug_descriptor;

}  // extern "C"
