// `minivm disasm`: its options and the listings it prints (bytecode, the interpreter's
// templates, baseline-compiled code).
#pragma once
#include <string>

#include <CLI/CLI.hpp>

#include "jit/baseline_compiler.h"
#include "vm/slowdown.h"

namespace cli {

struct DisasmOptions {
  std::string program;
  bool templates = false;
  bool jit = false;
  bool pc_table = false;     // --jit: also the debug info, pc by pc
  jit::JitOptions code;      // --jit: where the code polls (the same flags as run's)
  std::vector<vm::SlowdownSite> slowdowns;  // --slowdown, as run takes it
};

// Declares disasm's options on `disasm` (they print as `minivm disasm --help`).
void add_disasm_flags(CLI::App& disasm, DisasmOptions& options);
// Throws CLI::ValidationError for a combination that lists nothing.
void resolve_disasm_flags(const DisasmOptions& options);
// Prints the listings on stdout; returns the exit status (a compile error exits 2).
int disasm_command(const DisasmOptions& options);

}  // namespace cli
