// compile_source: the front end's pipeline. Each phase throws FrontendError at the
// first error it finds; this is the one place that catches it.
#include "vm/frontend.h"

#include <new>

#include <fmt/format.h>

#include "vm/codegen.h"
#include "vm/parser.h"
#include "vm/text.h"
#include "vm/typecheck.h"
#include "vm/verifier.h"

namespace vm {

std::string CompileError::format() const { return fmt::format("{}:{}:{}: error: {}", file, line, col, message); }

std::unique_ptr<Module> compile_source(std::string_view file, std::string_view source, CompileError& error) {
  auto report = [&](int line, int col, std::string message) {
    error = CompileError{std::string(file), line, col, std::move(message)};
    return nullptr;
  };
  try {
    ast::Program program = parse_program(source);
    check_program(program);
    std::unique_ptr<Module> module = generate_module(program, file);
    // The compiler's output must always verify; a failure here is a compiler bug.
    VerifyError v;
    if (!verify_module(*module, v))
      return report(1, 1, fmt::format("internal error: verifier: {}@{}: {}", v.function, v.bci, v.message));
    return module;
  } catch (const FrontendError& e) {
    // A diagnostic quotes tokens and names, which may be as long as the file.
    return report(e.pos.line, e.pos.col, with_long_words_shortened(e.message));
  } catch (const std::bad_alloc&) {
    return report(1, 1, "out of memory while compiling");
  }
}

}  // namespace vm
