// Unit tests of the bytecode compiler (vm/codegen.h) through compile_source: exact code
// for the documented shapes, constants, line and loop tables, max_stack, module layout.
#include <algorithm>
#include <bit>
#include <cmath>
#include <set>
#include <sstream>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "vm/disasm.h"
#include "vm/frontend.h"
#include "vm/verifier.h"

using vm::Op;
using vm::Type;

namespace {

std::unique_ptr<vm::Module> compile(std::string_view src) {
  vm::CompileError e;
  auto m = vm::compile_source("t.mini", src, e);
  INFO(e.format());
  REQUIRE(m);
  return m;
}

const vm::Function& fn(const vm::Module& m, std::string_view name) {
  const vm::Function* f = m.find(name);
  REQUIRE(f);
  return *f;
}

// Expected code, written with the same CodeBuilder the tests of other layers use.
struct Code {
  std::vector<uint8_t> bytes;
  vm::CodeBuilder b{bytes};
};

// On mismatch, show the listing: much easier to read than two byte vectors.
void check_code(const vm::Module& m, const vm::Function& f, const std::vector<uint8_t>& expected) {
  std::ostringstream listing;
  vm::disassemble_function(m, f, listing);
  INFO(listing.str());
  CHECK(f.code == expected);
}

bool same_loop(const vm::LoopEntry& a, const vm::LoopEntry& b) {
  return a.header_bci == b.header_bci && a.latch_bci == b.latch_bci && a.counted == b.counted;
}

}  // namespace

TEST_CASE("codegen: for loop has the documented counted shape") {
  auto m = compile("fn f(n: int): int { var s = 0; for i in 0..n { s += i; } return s; }\nfn main() {}");
  const auto& f = fn(*m, "f");
  // locals: n, s, i, $limit0; constants: #0 int 0
  CHECK(f.local_names == std::vector<std::string>{"n", "s", "i", "$limit0"});
  REQUIRE(f.constants.size() == 1);
  Code c;
  c.b.emit_u16(Op::ldc, 0);
  c.b.emit_u16(Op::store, 1);
  c.b.emit_u16(Op::ldc, 0);   // <a>
  c.b.emit_u16(Op::store, 2);  // store i
  c.b.emit_u16(Op::load, 0);   // <b>
  c.b.emit_u16(Op::store, 3);  // store $limit0
  c.b.emit_u16(Op::load, 2);
  c.b.emit_u16(Op::load, 3);
  size_t to_exit = c.b.emit_branch(Op::if_icmpge);
  size_t body = c.b.here();
  c.b.emit_u16(Op::load, 1);
  c.b.emit_u16(Op::iaddl, 2);  // s += i: the local-operand superinstruction
  c.b.emit_u16(Op::store, 1);
  size_t latch = c.b.here();
  c.b.emit_forloop(2, 3, body);
  c.b.patch_branch(to_exit, c.b.here());
  c.b.emit_u16(Op::load, 1);
  c.b.emit(Op::vret);
  check_code(*m, f, c.bytes);
  REQUIRE(f.loops.size() == 1);
  CHECK(same_loop(f.loops[0], {uint32_t(body), uint32_t(latch), true}));
  CHECK(f.max_stack == 2);
}

TEST_CASE("codegen: while loop is rotated, the latch is the backward conditional branch") {
  auto m = compile("fn main() { var i = 0; while (i < 10) { i += 1; } }");
  const auto& f = fn(*m, "main");
  Code c;
  c.b.emit_u16(Op::ldc, 0);
  c.b.emit_u16(Op::store, 0);
  size_t to_check = c.b.emit_branch(Op::jump);
  size_t body = c.b.here();
  c.b.emit_iinc(0, 1);
  c.b.patch_branch(to_check, c.b.here());
  c.b.emit_u16(Op::load, 0);
  c.b.emit_u16(Op::ldc, 1);
  size_t latch = c.b.here();
  c.b.emit_branch_to(Op::if_icmplt, body);
  c.b.emit(Op::ret);
  check_code(*m, f, c.bytes);
  REQUIRE(f.loops.size() == 1);
  CHECK(same_loop(f.loops[0], {uint32_t(body), uint32_t(latch), false}));
  CHECK(f.constants[1].bits == 10);
}

TEST_CASE("codegen: while (true) jumps back unconditionally and break leaves it") {
  auto m = compile("fn main() { var i = 0; while (true) { if (i == 3) { break; } i += 1; } }");
  const auto& f = fn(*m, "main");
  Code c;
  c.b.emit_u16(Op::ldc, 0);
  c.b.emit_u16(Op::store, 0);
  size_t to_check = c.b.emit_branch(Op::jump);
  size_t body = c.b.here();
  c.b.emit_u16(Op::load, 0);
  c.b.emit_u16(Op::ldc, 1);
  size_t to_else = c.b.emit_branch(Op::if_icmpne);  // i == 3 negated: branch to the end of the if
  size_t to_exit = c.b.emit_branch(Op::jump);      // break
  c.b.patch_branch(to_else, c.b.here());
  c.b.emit_iinc(0, 1);
  c.b.patch_branch(to_check, c.b.here());
  size_t latch = c.b.here();
  c.b.emit_branch_to(Op::jump, body);
  c.b.patch_branch(to_exit, c.b.here());
  c.b.emit(Op::ret);
  check_code(*m, f, c.bytes);
  REQUIRE(f.loops.size() == 1);
  CHECK(same_loop(f.loops[0], {uint32_t(body), uint32_t(latch), false}));
}

TEST_CASE("codegen: continue and break in a for loop target CONT and EXIT") {
  auto m = compile("fn main() { for i in 0..9 { if (i < 2) { continue; } break; } }");
  const auto& f = fn(*m, "main");
  Code c;
  c.b.emit_u16(Op::ldc, 0);
  c.b.emit_u16(Op::store, 0);
  c.b.emit_u16(Op::ldc, 1);
  c.b.emit_u16(Op::store, 1);
  c.b.emit_u16(Op::load, 0);
  c.b.emit_u16(Op::load, 1);
  size_t to_exit = c.b.emit_branch(Op::if_icmpge);
  size_t body = c.b.here();
  c.b.emit_u16(Op::load, 0);
  c.b.emit_u16(Op::ldc, 2);
  size_t to_endif = c.b.emit_branch(Op::if_icmpge);
  size_t to_cont = c.b.emit_branch(Op::jump);  // continue
  c.b.patch_branch(to_endif, c.b.here());
  size_t to_exit2 = c.b.emit_branch(Op::jump);  // break
  size_t latch = c.b.here();
  c.b.patch_branch(to_cont, latch);
  c.b.emit_forloop(0, 1, body);
  c.b.patch_branch(to_exit, c.b.here());
  c.b.patch_branch(to_exit2, c.b.here());
  c.b.emit(Op::ret);
  check_code(*m, f, c.bytes);
  REQUIRE(f.loops.size() == 1);
  CHECK(same_loop(f.loops[0], {uint32_t(body), uint32_t(latch), true}));
}

TEST_CASE("codegen: a for loop whose body always leaves has no latch and no loop entry") {
  auto m = compile("fn f(n: int): int { for i in 0..n { return i; } return -1; }\nfn main() {}");
  const auto& f = fn(*m, "f");
  CHECK(f.loops.empty());
  for (size_t bci = 0; bci < f.code.size(); bci += vm::op_info(Op(f.code[bci])).length)
    CHECK(Op(f.code[bci]) != Op::forloop);
}

TEST_CASE("codegen: iinc for += and -= of an int literal on an int local") {
  auto m = compile(
      "var g: int = 0;\n"
      "fn main() { var x = 0; x += 5; x -= 3; x += 2147483647; x -= 2147483647; x += -2147483648;\n"
      "  x += 2147483648; x -= -2147483648; g += 1; var y = 1.0; y += 2.0; x *= 2; }");
  const auto& f = fn(*m, "main");
  auto k = [&](int64_t v) {
    for (size_t i = 0; i < f.constants.size(); i++)
      if (f.constants[i].type == Type::Int && f.constants[i].bits == v) return uint16_t(i);
    FAIL("no constant " << v);
    return uint16_t(0);
  };
  Code c;
  c.b.emit_u16(Op::ldc, k(0));
  c.b.emit_u16(Op::store, 0);
  c.b.emit_iinc(0, 5);
  c.b.emit_iinc(0, -3);
  c.b.emit_iinc(0, 2147483647);
  c.b.emit_iinc(0, -2147483647);
  c.b.emit_iinc(0, INT32_MIN);
  // 2^31 does not fit an int32 (x += e is then `e; iaddl x; store x`, accumulate);
  // -(-2^31) does not either, and - does not commute
  c.b.emit_u16(Op::ldc, k(2147483648));
  c.b.emit_u16(Op::iaddl, 0);
  c.b.emit_u16(Op::store, 0);
  c.b.emit_u16(Op::load, 0);
  c.b.emit_u16(Op::ldc, k(-2147483648));
  c.b.emit(Op::isub);
  c.b.emit_u16(Op::store, 0);
  // globals never use iinc
  c.b.emit_u16(Op::gload, 0);
  c.b.emit_u16(Op::ldc, k(1));
  c.b.emit(Op::iadd);
  c.b.emit_u16(Op::gstore, 0);
  // floats neither: they accumulate, as `x *= 2` does
  c.b.emit_u16(Op::ldc, 4);  // float 1.0
  c.b.emit_u16(Op::store, 1);
  c.b.emit_u16(Op::ldc, 5);  // float 2.0
  c.b.emit_u16(Op::faddl, 1);
  c.b.emit_u16(Op::store, 1);
  c.b.emit_u16(Op::ldc, k(2));
  c.b.emit_u16(Op::imull, 0);
  c.b.emit_u16(Op::store, 0);
  c.b.emit(Op::ret);
  check_code(*m, f, c.bytes);
  // iinc needs no constants: the pool holds only what ldc uses
  REQUIRE(f.constants.size() == 7);
  CHECK(f.constants[4].type == Type::Float);
  CHECK(std::bit_cast<double>(f.constants[4].bits) == 1.0);
}

TEST_CASE("codegen: int compares fuse into if_icmp, negated when branching on false") {
  struct Case {
    const char* cond;
    Op if_branch;     // in `if (cond)`: jump to else on false
    Op while_branch;  // in `while (cond)`: jump back on true
  };
  const Case cases[] = {
      {"a == b", Op::if_icmpne, Op::if_icmpeq}, {"a != b", Op::if_icmpeq, Op::if_icmpne},
      {"a < b", Op::if_icmpge, Op::if_icmplt},  {"a <= b", Op::if_icmpgt, Op::if_icmple},
      {"a > b", Op::if_icmple, Op::if_icmpgt},  {"a >= b", Op::if_icmplt, Op::if_icmpge},
      {"!(a < b)", Op::if_icmplt, Op::if_icmpge},
  };
  for (auto& cs : cases) {
    INFO(cs.cond);
    auto m = compile(std::string("fn f(a: int, b: int) { if (") + cs.cond + ") { print(1); } while (" + cs.cond +
                     ") { print(2); } }\nfn main() {}");
    const auto& f = fn(*m, "f");
    // if: load a; load b; <branch> ELSE
    CHECK(f.code[0] == uint8_t(Op::load));
    CHECK(f.code[3] == uint8_t(Op::load));
    CHECK(f.code[6] == uint8_t(cs.if_branch));
    REQUIRE(f.loops.size() == 1);
    CHECK(f.code[f.loops[0].latch_bci] == uint8_t(cs.while_branch));
  }
}

TEST_CASE("codegen: float and bool compares produce a bool and are never negated") {
  auto m = compile("fn f(x: float, y: float, p: bool) { if (x < y) { print(1); } if (!(x >= y)) { print(2); }"
                   " if (p == true) { print(3); } }\nfn main() {}");
  const auto& f = fn(*m, "f");
  Code c;
  c.b.emit_u16(Op::load, 0);
  c.b.emit_u16(Op::load, 1);
  c.b.emit(Op::fcmplt);
  size_t e1 = c.b.emit_branch(Op::iffalse);
  c.b.emit_u16(Op::ldc, 0);
  c.b.emit_u16(Op::print, 0);
  c.b.patch_branch(e1, c.b.here());
  c.b.emit_u16(Op::load, 0);
  c.b.emit_u16(Op::load, 1);
  c.b.emit(Op::fcmpge);  // not fcmplt: NaN must make !(x >= y) true
  size_t e2 = c.b.emit_branch(Op::iftrue);
  c.b.emit_u16(Op::ldc, 1);
  c.b.emit_u16(Op::print, 1);
  c.b.patch_branch(e2, c.b.here());
  c.b.emit_u16(Op::load, 2);
  c.b.emit_u16(Op::ldc, 2);  // bool true
  c.b.emit(Op::zcmpeq);
  size_t e3 = c.b.emit_branch(Op::iffalse);
  c.b.emit_u16(Op::ldc, 3);
  c.b.emit_u16(Op::print, 2);
  c.b.patch_branch(e3, c.b.here());
  c.b.emit(Op::ret);
  check_code(*m, f, c.bytes);
  CHECK(f.constants[2].type == Type::Bool);
  CHECK(f.constants[2].bits == 1);
}

TEST_CASE("codegen: && and || short circuit with jumps in branch context") {
  auto m = compile("fn f(a: bool, b: bool, c: bool) { if (a && b || c) { print(1); } }\nfn main() {}");
  const auto& f = fn(*m, "f");
  // (a && b) || c, jump to ELSE on false:
  //   load a; iffalse SKIP; load b; iftrue THEN; SKIP: load c; iffalse ELSE; THEN: ...; ELSE: ret
  Code c;
  c.b.emit_u16(Op::load, 0);
  size_t to_skip = c.b.emit_branch(Op::iffalse);
  c.b.emit_u16(Op::load, 1);
  size_t to_then = c.b.emit_branch(Op::iftrue);
  c.b.patch_branch(to_skip, c.b.here());
  c.b.emit_u16(Op::load, 2);
  size_t to_else = c.b.emit_branch(Op::iffalse);
  c.b.patch_branch(to_then, c.b.here());
  c.b.emit_u16(Op::ldc, 0);
  c.b.emit_u16(Op::print, 0);
  c.b.patch_branch(to_else, c.b.here());
  c.b.emit(Op::ret);
  check_code(*m, f, c.bytes);
}

TEST_CASE("codegen: && in value context produces 0/1 through branches") {
  auto m = compile("fn f(x: int, p: bool): bool { return p && x > 0; }\nfn main() {}");
  const auto& f = fn(*m, "f");
  Code c;
  c.b.emit_u16(Op::load, 1);
  size_t f1 = c.b.emit_branch(Op::iffalse);
  c.b.emit_u16(Op::load, 0);
  c.b.emit_u16(Op::ldc, 0);  // int 0
  size_t f2 = c.b.emit_branch(Op::if_icmple);
  c.b.emit_u16(Op::ldc, 1);  // bool true
  size_t to_end = c.b.emit_branch(Op::jump);
  c.b.patch_branch(f1, c.b.here());
  c.b.patch_branch(f2, c.b.here());
  c.b.emit_u16(Op::ldc, 2);  // bool false
  c.b.patch_branch(to_end, c.b.here());
  c.b.emit(Op::vret);
  check_code(*m, f, c.bytes);
  CHECK(f.constants[1].type == Type::Bool);
  CHECK(f.constants[1].bits == 1);
  CHECK(f.constants[2].bits == 0);
  CHECK(f.max_stack == 2);
}

TEST_CASE("codegen: an element whose array and index are locals is stored by iastorell or fastorell, read first for op=") {
  auto m = compile("fn f(a: int[], b: float[], i: int) { a[i] += 2; b[i] *= 0.5; a[i] = 7; }\nfn main() {}");
  const auto& f = fn(*m, "f");
  Code c;
  c.b.emit_u16u16(Op::ialoadll, 0, 2);
  c.b.emit_u16(Op::ldc, 0);
  c.b.emit(Op::iadd);
  c.b.emit_u16u16(Op::iastorell, 0, 2);
  c.b.emit_u16u16(Op::faloadll, 1, 2);
  c.b.emit_u16(Op::ldc, 1);
  c.b.emit(Op::fmul);
  c.b.emit_u16u16(Op::fastorell, 1, 2);
  c.b.emit_u16(Op::ldc, 2);
  c.b.emit_u16u16(Op::iastorell, 0, 2);
  c.b.emit(Op::ret);
  check_code(*m, f, c.bytes);
  CHECK(f.max_stack == 2);
}

TEST_CASE("codegen: compound assignment on any other array element uses dup2") {
  auto m = compile("fn g(a: int[], b: float[], i: int) { a[i - 1] += 2; b[i - 1] *= 0.5; a[i - 1] = 7; }\nfn main() {}");
  const auto& g = fn(*m, "g");
  Code c;
  for (auto [array, load, constant, op, store] : {std::tuple{0, Op::iaload, 1, Op::iadd, Op::iastore},
                                                  std::tuple{1, Op::faload, 2, Op::fmul, Op::fastore}}) {
    c.b.emit_u16(Op::load, uint16_t(array));
    c.b.emit_u16(Op::load, 2);
    c.b.emit_u16(Op::ldc, 0);
    c.b.emit(Op::isub);  // i - 1: the index is no local
    c.b.emit(Op::dup2);
    c.b.emit(load);
    c.b.emit_u16(Op::ldc, uint16_t(constant));
    c.b.emit(op);
    c.b.emit(store);
  }
  c.b.emit_u16(Op::load, 0);
  c.b.emit_u16(Op::load, 2);
  c.b.emit_u16(Op::ldc, 0);
  c.b.emit(Op::isub);
  c.b.emit_u16(Op::ldc, 3);
  c.b.emit(Op::iastore);
  c.b.emit(Op::ret);
  check_code(*m, g, c.bytes);
  CHECK(g.max_stack == 4);
}

TEST_CASE("codegen: op= whose e is a local of the target's type takes it as a local operand on a field, an element and a captured local too") {
  auto m = compile(
      "class P { var x: float; var n: int; }\n"
      "fn f(p: P, d: float, a: int[], k: int) { p.x += d; p.n *= k; a[k - 1] += k; a[k] -= k; }\n"
      "fn g(n: int, k: int): int { var c = fn(): int { return n; }; n += k; return c(); }\n"
      "fn main() {}");
  for (auto [name, expected] : {std::pair{"f", std::vector<Op>{Op::faddl, Op::imull, Op::iaddl, Op::isubl}},
                                std::pair{"g", std::vector<Op>{Op::iaddl}}}) {
    const auto& f = fn(*m, name);
    std::ostringstream listing;
    vm::disassemble_function(*m, f, listing);
    INFO(listing.str());
    std::vector<Op> local_forms;
    const std::set<Op> arithmetic{Op::iaddl, Op::isubl, Op::imull, Op::faddl, Op::fsubl, Op::fmull, Op::fdivl};
    for (size_t bci = 0; bci < f.code.size(); bci += vm::op_info(Op(f.code[bci])).length)
      if (arithmetic.count(Op(f.code[bci]))) local_forms.push_back(Op(f.code[bci]));
    CHECK(local_forms == expected);
  }
}

TEST_CASE("codegen: a[i] with a and i locals is one superinstruction, with only i a local another, but not on a string or a reference array") {
  auto m = compile(
      "fn f(a: int[], b: float[], s: string, c: bool[], i: int): float { var x = a[i] + a[i + 1]; return b[i] + float(s[i] + x) + "
      "float(len(c)); }\nfn g(c: bool[], i: int): bool { return c[i]; }\nfn mk(): int[] { return new int[2]; }\n"
      "fn h(i: int): int { return mk()[i]; }\nfn main() {}");
  const auto& f = fn(*m, "f");
  Code c;
  c.b.emit_u16u16(Op::ialoadll, 0, 4);  // a[i]
  c.b.emit_u16(Op::load, 0);
  c.b.emit_u16(Op::load, 4);
  c.b.emit_u16(Op::ldc, 0);
  c.b.emit(Op::iadd);
  c.b.emit(Op::iaload);  // a[i + 1]: the index is no local
  c.b.emit(Op::iadd);
  c.b.emit_u16(Op::store, 5);
  c.b.emit_u16u16(Op::faloadll, 1, 4);  // b[i]
  c.b.emit_u16(Op::load, 2);
  c.b.emit_u16(Op::load, 4);
  c.b.emit(Op::sload);  // s[i]
  c.b.emit_u16(Op::iaddl, 5);
  c.b.emit(Op::i2f);
  c.b.emit(Op::fadd);
  c.b.emit_u16(Op::load, 3);
  c.b.emit(Op::arraylength);
  c.b.emit(Op::i2f);
  c.b.emit(Op::fadd);
  c.b.emit(Op::vret);
  check_code(*m, f, c.bytes);
  Code g;
  g.b.emit_u16(Op::load, 0);
  g.b.emit_u16(Op::load, 1);
  g.b.emit(Op::aaload);  // c[i] of a bool[]
  g.b.emit(Op::vret);
  check_code(*m, fn(*m, "g"), g.bytes);
  Code h;
  h.b.emit_u16(Op::call, uint16_t(std::find_if(m->functions.begin(), m->functions.end(), [](auto& x) { return x->name == "mk"; }) -
                                  m->functions.begin()));
  h.b.emit_u16(Op::ialoadl, 0);  // mk()[i]: the array is no local
  h.b.emit(Op::vret);
  check_code(*m, fn(*m, "h"), h.bytes);
}

TEST_CASE("codegen: x * y with x and y float locals is one superinstruction, but not on ints, a constant or a captured local") {
  auto m = compile(
      "fn f(x: float, y: float, i: int, j: int): float { var p = x * y; return p * x + float(i * j) + x * 2.0; }\n"
      "fn g(x: float): float { var k = fn(): float { return x; }; return x * x + k(); }\n"
      "fn main() {}");
  const auto& f = fn(*m, "f");
  Code c;
  c.b.emit_u16u16(Op::fmulll, 0, 1);  // x * y
  c.b.emit_u16(Op::store, 4);
  c.b.emit_u16u16(Op::fmulll, 4, 0);  // p * x
  c.b.emit_u16(Op::load, 2);
  c.b.emit_u16(Op::imull, 3);  // i * j: ints
  c.b.emit(Op::i2f);
  c.b.emit(Op::fadd);
  c.b.emit_u16(Op::load, 0);
  c.b.emit_u16(Op::ldc, 0);
  c.b.emit(Op::fmul);  // x * 2.0: a constant
  c.b.emit(Op::fadd);
  c.b.emit(Op::vret);
  check_code(*m, f, c.bytes);
  const auto& g = fn(*m, "g");
  for (size_t bci = 0; bci < g.code.size(); bci += vm::op_info(vm::Op(g.code[bci])).length)
    CHECK(vm::Op(g.code[bci]) != Op::fmulll);  // x lives in a cell the lambda shares
}

TEST_CASE("codegen: x += e and x *= e on an int or float local add into x after e, but not -=, a local e, a global, a string or a captured local") {
  auto m = compile(
      "var g: int = 0;\n"
      "fn h(): int { return 3; }\n"
      "fn f(a: float[], i: int, s: float, n: int): float {\n"
      "  s += a[i] * s; n *= h(); s -= a[i]; n += i; g += h(); s *= 0.5; return s; }\n"
      "fn k(n: int, t: string): int { var c = fn(): int { return n; }; n += h(); t += \"x\"; return n + c(); }\n"
      "fn main() {}");
  const auto& f = fn(*m, "f");
  Code c;
  c.b.emit_u16u16(Op::faloadll, 0, 1);  // s += a[i] * s
  c.b.emit_u16(Op::fmull, 2);
  c.b.emit_u16(Op::faddl, 2);
  c.b.emit_u16(Op::store, 2);
  c.b.emit_u16(Op::call, 0);  // n *= h()
  c.b.emit_u16(Op::imull, 3);
  c.b.emit_u16(Op::store, 3);
  c.b.emit_u16(Op::load, 2);  // s -= a[i]: - does not commute
  c.b.emit_u16u16(Op::faloadll, 0, 1);
  c.b.emit(Op::fsub);
  c.b.emit_u16(Op::store, 2);
  c.b.emit_u16(Op::load, 3);  // n += i: local_operand's form
  c.b.emit_u16(Op::iaddl, 1);
  c.b.emit_u16(Op::store, 3);
  c.b.emit_u16(Op::gload, 0);  // g += h(): a global
  c.b.emit_u16(Op::call, 0);
  c.b.emit(Op::iadd);
  c.b.emit_u16(Op::gstore, 0);
  c.b.emit_u16(Op::ldc, 0);  // s *= 0.5
  c.b.emit_u16(Op::fmull, 2);
  c.b.emit_u16(Op::store, 2);
  c.b.emit_u16(Op::load, 2);
  c.b.emit(Op::vret);
  check_code(*m, f, c.bytes);
  // n is a cell the lambda shares, and t a string: neither adds into a local
  const auto& k = fn(*m, "k");
  std::ostringstream out;
  vm::disassemble_function(*m, k, out);
  INFO(out.str());
  for (size_t bci = 0; bci < k.code.size(); bci += vm::op_info(vm::Op(k.code[bci])).length)
    CHECK(vm::Op(k.code[bci]) != Op::iaddl);
  CHECK(out.str().find("sconcat") != std::string::npos);
}

TEST_CASE("codegen: calls, builtins, spawn, print and conversions") {
  auto m = compile(
      "fn g(a: int, b: float): int { return a; }\n"
      "fn v() { }\n"
      "fn main() {\n"
      "  g(1, 2.0);\n"
      "  v();\n"
      "  var a = new int[3];\n"
      "  var b = new float[3];\n"
      "  var n = len(a) + crc32(a, 0, 3) + atomic_add(a, 0, 1) + nanotime();\n"
      "  var s = sqrt(float(n)) + float(int(1.5));\n"
      "  arraycopy(b, 0, b, 1, 1);\n"
      "  var h = spawn g(n, s);\n"
      "  join(h);\n"
      "  print(\"n =\", n, s, \"!\", n);\n"
      "  var i = int(n);\n"
      "}\n");
  const auto& f = fn(*m, "main");
  std::ostringstream out;
  vm::disassemble_function(*m, f, out);
  std::string listing = out.str();
  INFO(listing);
  // call statements: the result of g is dropped, v has none
  CHECK(listing.find("call         0           // g(a: int, b: float): int\n") != std::string::npos);
  CHECK(listing.find("pop\n") != std::string::npos);
  CHECK(listing.find("call         1           // v()\n") != std::string::npos);
  CHECK(listing.find("newarray     0           // int\n") != std::string::npos);
  CHECK(listing.find("newarray     1           // float\n") != std::string::npos);
  CHECK(listing.find("arraylength\n") != std::string::npos);
  CHECK(listing.find("native       5           // crc32\n") != std::string::npos);
  CHECK(listing.find("atomic_add\n") != std::string::npos);
  CHECK(listing.find("native       0           // nanotime\n") != std::string::npos);
  CHECK(listing.find("i2f\n") != std::string::npos);
  CHECK(listing.find("fsqrt\n") != std::string::npos);
  CHECK(listing.find("f2i\n") != std::string::npos);
  CHECK(listing.find("native       4           // arraycopy\n") != std::string::npos);
  CHECK(listing.find("spawn        0           // g(a: int, b: float): int\n") != std::string::npos);
  CHECK(listing.find("native       3           // join\n") != std::string::npos);
  CHECK(listing.find("print        0           // \"n =\", int, float, \"!\", int\n") != std::string::npos);
  // int(n) of an int is a no-op: load n; store i
  CHECK(f.code[f.code.size() - 4] == uint8_t(Op::store));  // ... load n; store i; ret
  CHECK(f.code[f.code.size() - 7] == uint8_t(Op::load));
  CHECK(f.code[f.code.size() - 6] == 2);  // n
  REQUIRE(f.prints.size() == 1);
  const auto& d = f.prints[0];
  REQUIRE(d.items.size() == 5);
  CHECK(d.items[0].type == Type::Void);
  CHECK(f.strings[d.items[0].string_index] == "n =");
  CHECK(d.items[1].type == Type::Int);
  CHECK(d.items[2].type == Type::Float);
  CHECK(f.strings[d.items[3].string_index] == "!");
  CHECK(d.value_count() == 3);
  // exactly one pop (for g's result)
  int pops = 0;
  for (size_t bci = 0; bci < f.code.size(); bci += vm::op_info(Op(f.code[bci])).length) pops += f.code[bci] == uint8_t(Op::pop);
  CHECK(pops == 1);
}

TEST_CASE("codegen: the spawn handle of a spawn statement is popped") {
  auto m = compile("fn w() {}\nfn main() { spawn w(); }");
  const auto& f = fn(*m, "main");
  Code c;
  c.b.emit_u16(Op::spawn, 0);
  c.b.emit(Op::pop);
  c.b.emit(Op::ret);
  check_code(*m, f, c.bytes);
  CHECK(f.max_stack == 1);
}

TEST_CASE("codegen: constants are deduplicated by type and value") {
  auto m = compile("fn main() { var a = 1; var b = 1; var c = 1.0; var d = true; var e = 1.0; var f = -0.0; var g = 0.0; }");
  const auto& f = fn(*m, "main");
  REQUIRE(f.constants.size() == 5);
  CHECK(f.constants[0].type == Type::Int);
  CHECK(f.constants[0].bits == 1);
  CHECK(f.constants[1].type == Type::Float);
  CHECK(f.constants[2].type == Type::Bool);
  CHECK(f.constants[2].bits == 1);
  CHECK(std::bit_cast<double>(f.constants[3].bits) == 0.0);
  CHECK(std::signbit(std::bit_cast<double>(f.constants[3].bits)));  // -0.0 is its own constant
  CHECK_FALSE(std::signbit(std::bit_cast<double>(f.constants[4].bits)));
}

TEST_CASE("codegen: no dead code after return, break, continue or a leaving if/else") {
  auto m = compile(
      "fn f(b: bool): int {\n"
      "  if (b) { return 1; } else { return 2; }\n"
      "  print(3);\n"
      "}\n"
      "fn g(): int { return 1; print(2); }\n"
      "fn main() { while (true) { } }\n");
  Code c;
  c.b.emit_u16(Op::load, 0);
  size_t to_else = c.b.emit_branch(Op::iffalse);
  c.b.emit_u16(Op::ldc, 0);
  c.b.emit(Op::vret);
  c.b.patch_branch(to_else, c.b.here());
  c.b.emit_u16(Op::ldc, 1);
  c.b.emit(Op::vret);
  check_code(*m, fn(*m, "f"), c.bytes);
  CHECK(fn(*m, "f").constants.size() == 2);  // the dead print(3) added nothing
  Code g;
  g.b.emit_u16(Op::ldc, 0);
  g.b.emit(Op::vret);
  check_code(*m, fn(*m, "g"), g.bytes);
  CHECK(fn(*m, "g").prints.empty());
  // while (true) { }: jump CHECK; CHECK: jump BODY (a self loop); nothing after it
  Code w;
  w.b.emit_branch(Op::jump);
  w.b.patch_branch(0, 5);
  w.b.emit_branch_to(Op::jump, 5);
  check_code(*m, fn(*m, "main"), w.bytes);
  REQUIRE(fn(*m, "main").loops.size() == 1);
  CHECK(same_loop(fn(*m, "main").loops[0], {5, 5, false}));
}

TEST_CASE("codegen: line table has an entry whenever the source line changes") {
  auto m = compile(
      "fn main() {\n"         // 1
      "  var x = 1;\n"        // 2
      "\n"                    // 3
      "  for i in 0..3 {\n"   // 4
      "    x += i;\n"         // 5
      "  }\n"                 // 6
      "  print(x,\n"          // 7
      "        x + 1);\n"     // 8
      "}\n");                 // 9
  const auto& f = fn(*m, "main");
  CHECK(f.line == 1);
  std::vector<std::pair<uint32_t, uint32_t>> lines;
  for (auto& e : f.lines) lines.push_back({e.bci, e.line});
  // 0 ldc 3 store x | 6 ldc 9 store i 12 ldc 15 store lim 18 load 21 load 24 if_icmpge |
  // 29 load x 32 iaddl i 35 store x | 38 forloop | 47 load x (line 7) | 50 load x 53 ldc 56 iadd (line 8) |
  // 57 print (line 7, the call) | 60 ret (line 9)
  std::vector<std::pair<uint32_t, uint32_t>> expected = {{0, 2},  {6, 4},  {29, 5}, {38, 4},
                                                         {47, 7}, {50, 8}, {57, 7}, {60, 9}};
  CHECK(lines == expected);
  CHECK(f.line_at(0) == 2);
  CHECK(f.line_at(39) == 4);
  CHECK(f.line_at(60) == 9);
}

TEST_CASE("codegen: loop table sorted by header, nested loops") {
  auto m = compile(
      "fn main() {\n"
      "  var n = 0;\n"
      "  while (n < 5) {\n"
      "    for i in 0..n { n += 0; }\n"
      "    n += 1;\n"
      "  }\n"
      "  for j in 0..2 { }\n"
      "}\n");
  const auto& f = fn(*m, "main");
  REQUIRE(f.loops.size() == 3);
  CHECK_FALSE(f.loops[0].counted);  // the while: outermost, its header comes first
  CHECK(f.loops[1].counted);
  CHECK(f.loops[2].counted);
  CHECK(f.loops[0].header_bci < f.loops[1].header_bci);
  CHECK(f.loops[1].header_bci < f.loops[2].header_bci);
  for (auto& l : f.loops) {
    const uint8_t* latch = f.code.data() + l.latch_bci;
    CHECK(int64_t(l.latch_bci) + vm::branch_offset(latch) == int64_t(l.header_bci));
  }
  // the for loop nested in the while lies inside it
  CHECK(f.loops[1].header_bci > f.loops[0].header_bci);
  CHECK(f.loops[1].latch_bci < f.loops[0].latch_bci);
}

TEST_CASE("codegen: a || condition in a while has several backward branches and the latch is the last") {
  auto m = compile("fn f(a: int, b: bool) { while (a < 3 || b) { a += 1; } }\nfn main() {}");
  const auto& f = fn(*m, "f");
  REQUIRE(f.loops.size() == 1);
  const auto& l = f.loops[0];
  CHECK(f.code[l.latch_bci] == uint8_t(Op::iftrue));
  int backward = 0;
  for (size_t bci = 0; bci < f.code.size(); bci += vm::op_info(Op(f.code[bci])).length) {
    Op op = Op(f.code[bci]);
    if (vm::is_branch(op) && int64_t(bci) + vm::branch_offset(f.code.data() + bci) == int64_t(l.header_bci)) backward++;
  }
  CHECK(backward == 2);
}

TEST_CASE("codegen: max_stack is the exact maximum depth") {
  auto m = compile(
      "fn g(a: int, b: int, c: int): int { return a; }\n"
      "fn f(): int { return g(1, 2, 3 + 4 * (5 - 6)); }\n"
      "fn h() { }\n"
      "fn main() { print(1, 2.0, true, 4, 5); }\n");
  CHECK(fn(*m, "g").max_stack == 1);
  CHECK(fn(*m, "f").max_stack == 6);  // 1 2 3 4 5 6
  CHECK(fn(*m, "h").max_stack == 0);
  CHECK(fn(*m, "main").max_stack == 5);
  for (auto& f : m->functions) {
    vm::VerifyError e;
    vm::VerifyInfo info;
    REQUIRE(vm::verify_function(*m, *f, e, info));
    CHECK(info.max_depth == f->max_stack);
  }
}

TEST_CASE("codegen: module layout: globals, functions, main, hints, lines") {
  auto m = compile(
      "var a: int = -7;\n"
      "var b: float = 2.5;\n"
      "var c: bool = true;\n"
      "@inline\n"
      "fn small(): int { return a; }\n"
      "@noinline fn big() { b = 1.0; c = false; }\n"
      "fn main(): int { big(); return small(); }\n");
  CHECK(m->files == std::vector<std::string>{"t.mini"});
  REQUIRE(m->globals.size() == 3);
  CHECK(m->globals[0].name == "a");
  CHECK(m->globals[0].type == Type::Int);
  CHECK(m->globals[0].init_bits == -7);
  CHECK(m->globals[1].init_bits == std::bit_cast<int64_t>(2.5));
  CHECK(m->globals[2].init_bits == 1);
  REQUIRE(m->functions.size() == 3);
  CHECK(m->main_index == 2);
  for (size_t i = 0; i < 3; i++) CHECK(m->functions[i]->index == i);
  CHECK(m->functions[0]->inline_hint == vm::InlineHint::Inline);
  CHECK(m->functions[0]->line == 5);  // the `fn` keyword, not the annotation
  CHECK(m->functions[1]->inline_hint == vm::InlineHint::NoInline);
  CHECK(m->functions[2]->inline_hint == vm::InlineHint::Default);
  CHECK(m->functions[2]->result == Type::Int);
  CHECK(m->functions[0]->params.empty());
  Code c;
  c.b.emit_u16(Op::gload, 0);
  c.b.emit(Op::vret);
  check_code(*m, *m->functions[0], c.bytes);
}

TEST_CASE("codegen: unary operators and value-context compares") {
  auto m = compile(
      "fn f(a: int, x: float, p: bool) {\n"
      "  var r = -a; var s = -x; var t = ~a; var u = !p;\n"
      "  var v = a < 1; var w = x != 1.0; var y = p == false; var z = p & true | p ^ p;\n"
      "  var q = a >>> 1 >> 2 << 3 % 4;\n"
      "}\nfn main() {}");
  std::ostringstream out;
  vm::disassemble_function(*m, fn(*m, "f"), out);
  std::string listing = out.str();
  INFO(listing);
  for (const char* op : {"ineg", "fneg", "inot", "znot", "icmplt", "fcmpne", "zcmpeq", "zand", "zor", "zxor",
                         "iushr", "ishr", "ishl", "irem"})
    CHECK(listing.find(std::string(": ") + op + "\n") != std::string::npos);
}
