// libFuzzer target for the front end: any text ends as a module that verifies, or as
// one compile error with a position inside the text and a message; never a crash, a
// hang, a leak or undefined behaviour (the target is built with ASan and UBSan).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string_view>

#include "vm/disasm.h"
#include "vm/frontend.h"
#include "vm/verifier.h"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_frontend: %s: %s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view source(reinterpret_cast<const char*>(data), size);
  vm::CompileError error;
  std::unique_ptr<vm::Module> module = vm::compile_source("fuzz.mini", source, error);
  if (module == nullptr) {
    // compile_source verifies what it generated: this message is a compiler bug.
    if (error.message.starts_with("internal error")) fail("the compiler's output does not verify", error.format());
    if (error.message.empty()) fail("a compile error without a message", error.format());
    size_t lines = 1;
    for (char c : source) lines += c == '\n';
    if (error.line < 1 || size_t(error.line) > lines || error.col < 1)
      fail("a compile error positioned outside the text", error.format());
    return 0;
  }
  vm::VerifyError v;
  if (!vm::verify_module(*module, v)) fail("an accepted module does not verify", v.function + ": " + v.message);
  // Every accepted module can be listed (minivm disasm).
  std::ostringstream listing;
  vm::disassemble(*module, listing);
  return 0;
}
