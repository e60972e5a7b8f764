// The Mini front end: source text -> verified bytecode Module.
#pragma once
#include <memory>
#include <string>
#include <string_view>

#include "vm/bytecode.h"

namespace vm {

// A compile error, positioned in the source. Printed as `file:line:col: error: message`.
struct CompileError {
  std::string file;
  int line = 0;
  int col = 0;
  std::string message;
  std::string format() const;  // "file:LINE:COL: error: message"
};

// Compiles one source file's text. On success returns the module (already verified);
// on failure returns nullptr and fills `error` with the first error a user needs to see
// (no cascades). Never throws for bad input.
std::unique_ptr<Module> compile_source(std::string_view file, std::string_view source, CompileError& error);

}  // namespace vm
