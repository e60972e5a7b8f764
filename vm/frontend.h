// The Mini front end: source text -> verified bytecode Module.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "vm/bytecode.h"
#include "vm/slowdown.h"

namespace vm {

// A compile error, positioned in the source. Printed as `file:line:col: error: message`.
struct CompileError {
  std::string file;
  int line = 0;
  int col = 0;
  std::string message;
  std::string format() const;  // "file:LINE:COL: error: message"
};

// Reads a file a program imports, by the path compile_source resolved for it (the
// importing file's directory joined with the import's path); false with why in `error`
// ("cannot open 'x.mini': No such file or directory").
using SourceReader = std::function<bool(const std::string& path, std::string& text, std::string& error)>;

// The most files one program may have, itself included (SourcePos::file is 16 bits).
inline constexpr size_t kMaxProgramFiles = 4096;

// Compiles a program: `file`'s text and the files it imports, transitively, each once
// (however it is named; an import cycle is fine), read with `read` (without one an import
// is an error). Every file's declarations join one program; Module::files lists the files,
// the program first. On success returns the module (already verified); on failure returns
// nullptr and fills `error` with the first error a user needs to see (no cascades), in the
// file it is in. Never throws for bad input.
// `slowdowns` (--slowdown, vm/slowdown.h) are placed in the code, each counting where.
std::unique_ptr<Module> compile_source(std::string_view file, std::string_view source, CompileError& error,
                                       const SourceReader& read = {}, std::vector<SlowdownSite>* slowdowns = nullptr);

}  // namespace vm
