// compile_source: the front end's pipeline. Each phase throws FrontendError at the
// first error it finds; this is the one place that catches it.
#include "vm/frontend.h"

#include <filesystem>
#include <new>
#include <unordered_map>

#include <fmt/format.h>

#include "vm/codegen.h"
#include "vm/parser.h"
#include "vm/text.h"
#include "vm/typecheck.h"
#include "vm/verifier.h"

namespace vm {

namespace fs = std::filesystem;

std::string CompileError::format() const { return fmt::format("{}:{}:{}: error: {}", file, line, col, message); }

namespace {

// The path an import names, as messages and profiles show it: relative to the importing
// file's directory, as the program's own path is relative to the working directory.
std::string imported_path(const std::string& importer, const std::string& path) {
  fs::path p(path);
  if (p.is_absolute()) return p.lexically_normal().string();
  return (fs::path(importer).parent_path() / p).lexically_normal().string();
}

// One key per file however it is reached ("a/../b.mini", a symbolic link): a file is
// read once, so an import cycle or a diamond of imports is no redefinition.
std::string file_identity(const std::string& path) {
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(path, ec);
  if (!ec) return canonical.string();
  fs::path absolute = fs::absolute(path, ec);
  return ec ? path : absolute.lexically_normal().string();
}

// Reads and parses every file the program imports, in the order each is first imported
// (breadth first), and moves their declarations into `program`.
void add_imports(ast::Program& program, std::vector<std::string>& files, const SourceReader& read) {
  std::unordered_map<std::string, uint16_t> seen{{file_identity(files[0]), 0}};
  std::vector<std::vector<ast::ImportDecl>> imports{std::move(program.imports)};
  for (size_t from = 0; from < imports.size(); from++) {
    for (const ast::ImportDecl& import : imports[from]) {
      std::string path = imported_path(files[from], import.path);
      std::string identity = file_identity(path);
      if (seen.count(identity)) continue;
      if (!read) throw FrontendError{import.pos, "this program cannot import files (it was not read from one)"};
      if (files.size() == kMaxProgramFiles)
        throw FrontendError{import.pos, fmt::format("too many files in one program (at most {})", kMaxProgramFiles)};
      std::string text, why;
      if (!read(path, text, why)) throw FrontendError{import.pos, fmt::format("cannot import \"{}\": {}", import.path, why)};
      uint16_t index = uint16_t(files.size());
      seen.emplace(std::move(identity), index);
      files.push_back(path);
      ast::Program part = parse_program(text, index);
      imports.push_back(std::move(part.imports));
      for (auto& d : part.globals) program.globals.push_back(std::move(d));
      for (auto& d : part.functions) program.functions.push_back(std::move(d));
      for (auto& d : part.classes) program.classes.push_back(std::move(d));
      for (auto& d : part.generic_classes) program.generic_classes.push_back(std::move(d));
      for (auto& d : part.generic_functions) program.generic_functions.push_back(std::move(d));
    }
  }
}

}  // namespace

std::unique_ptr<Module> compile_source(std::string_view file, std::string_view source, CompileError& error,
                                       const SourceReader& read, std::vector<SlowdownSite>* slowdowns) {
  std::vector<std::string> files{std::string(file)};
  auto report = [&](SourcePos at, std::string message) {
    error = CompileError{files[at.file < files.size() ? at.file : 0], at.line, at.col, std::move(message)};
    return nullptr;
  };
  try {
    ast::Program program = parse_program(source, 0);
    add_imports(program, files, read);
    program.files = files;
    check_program(program);
    std::vector<SlowdownSite> none;
    std::unique_ptr<Module> module = generate_module(program, files, slowdowns != nullptr ? *slowdowns : none);
    // The compiler's output must always verify; a failure here is a compiler bug.
    VerifyError v;
    if (!verify_module(*module, v))
      return report(SourcePos{1, 1}, fmt::format("internal error: verifier: {}@{}: {}", v.function, v.bci, v.message));
    return module;
  } catch (const FrontendError& e) {
    // A diagnostic quotes tokens and names, which may be as long as the file.
    return report(e.pos, with_long_words_shortened(e.message));
  } catch (const std::bad_alloc&) {
    return report(SourcePos{1, 1}, "out of memory while compiling");
  }
}

}  // namespace vm
