// Unit tests of local liveness (vm/liveness.h), on functions the compiler produces: a
// local is live exactly where some path still reads it before storing to it.
#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "vm/frontend.h"
#include "vm/opcodes.h"
#include "vm/verifier.h"

namespace {

std::unique_ptr<vm::Module> compile(const std::string& source) {
  vm::CompileError error;
  auto m = vm::compile_source("t.mini", source, error);
  REQUIRE(m);
  return m;
}

const vm::Function& function(const vm::Module& m, const std::string& name) {
  for (auto& f : m.functions)
    if (f->name == name) return *f;
  FAIL("no function " << name);
  return *m.functions[0];
}

// The bci of the n-th (0-based) instruction with opcode `op`.
size_t nth(const vm::Function& f, vm::Op op, int n) {
  for (size_t bci = 0; bci < f.code.size(); bci += vm::op_info(vm::Op(f.code[bci])).length)
    if (vm::Op(f.code[bci]) == op && n-- == 0) return bci;
  FAIL("no such instruction");
  return 0;
}

}  // namespace

TEST_CASE("liveness: a local is dead after its last read and before its store", "[liveness]") {
  auto m = compile(
      "fn f(): int {\n"
      "    var a = new int[4];\n"   // local 0
      "    var n = len(a);\n"       // last read of a
      "    var b = new int[n];\n"   // a is dead here
      "    return len(b);\n"
      "}\n"
      "fn main() { print(f()); }\n");
  const vm::Function& f = function(*m, "f");
  vm::LocalLiveness live(f);
  size_t first_new = nth(f, vm::Op::newarray, 0), second_new = nth(f, vm::Op::newarray, 1);
  CHECK_FALSE(live.live(first_new, 0));  // a is about to be stored: its old value is dead
  CHECK_FALSE(live.live(second_new, 0));  // read for the last time before
  size_t read_a = nth(f, vm::Op::load, 0);
  CHECK(live.live(read_a, 0));
  CHECK_FALSE(live.live(nth(f, vm::Op::vret, 0), 2));  // b was read already
}

TEST_CASE("liveness: a value read after a loop stays live through the loop", "[liveness]") {
  auto m = compile(
      "fn f(n: int): int {\n"
      "    var keep = new int[3];\n"
      "    var s = 0;\n"
      "    while (s < n) { var t = new int[5]; s += len(t); }\n"
      "    return s + len(keep);\n"
      "}\n"
      "fn main() { print(f(10)); }\n");
  const vm::Function& f = function(*m, "f");
  vm::LocalLiveness live(f);
  size_t in_loop = nth(f, vm::Op::newarray, 1);
  uint32_t keep = 1, t = 3;  // n is local 0, keep 1, s 2, t 3
  CHECK(live.live(in_loop, keep));   // read after the loop
  CHECK_FALSE(live.live(in_loop, t));  // stored right after
  CHECK(live.live(in_loop, 0));      // n: read at the loop's test
}

TEST_CASE("liveness: the verifier attaches it", "[liveness]") {
  auto m = compile("fn main() { var a = new int[2]; print(len(a)); }\n");
  const vm::Function& f = function(*m, "main");
  vm::VerifyError error;
  vm::VerifyInfo info;
  REQUIRE(vm::verify_function(*m, f, error, info));
  CHECK(info.live_locals.live(nth(f, vm::Op::load, 0), 0));
  CHECK_FALSE(info.live_locals.live(nth(f, vm::Op::newarray, 0), 0));
}
