// Unit tests of the bytecode verifier (vm/verifier.h): hand-built bad bytecode is
// rejected with the right function, bci and message; everything the compiler produces
// verifies, with max_stack equal to the deepest stack the verifier sees.
#include <algorithm>
#include <bit>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/unit/bytecode_fixtures.h"
#include "vm/builtins.h"
#include "vm/frontend.h"
#include "vm/lexer.h"
#include "vm/slowdown.h"
#include "vm/verifier.h"

using vm::Op;
using vm::Type;

namespace {

// A module with one function `f` under construction, plus helpers to build it.
struct Build {
  vm::Module m;
  vm::Function* f;
  vm::CodeBuilder b;

  Build(std::vector<Type> params, Type result, std::vector<Type> extra_locals = {}, uint16_t max_stack = 8)
      : f(add(m, "f", params, result, extra_locals)), b(f->code) {
    f->max_stack = max_stack;
  }
  static vm::Function* add(vm::Module& m, std::string name, std::vector<Type> params, Type result,
                           std::vector<Type> extra_locals) {
    auto fn = std::make_unique<vm::Function>();
    fn->name = std::move(name);
    fn->index = uint16_t(m.functions.size());
    fn->line = 1;
    fn->params = params;
    fn->result = result;
    fn->local_types = params;
    for (Type t : extra_locals) fn->local_types.push_back(t);
    fn->lines.push_back({0, 1});
    m.functions.push_back(std::move(fn));
    return m.functions.back().get();
  }
  uint16_t k(Type t, int64_t bits) {
    f->constants.push_back({t, bits});
    return uint16_t(f->constants.size() - 1);
  }
  uint16_t kint(int64_t v) { return k(Type::Int, v); }
  uint16_t kfloat(double v) { return k(Type::Float, std::bit_cast<int64_t>(v)); }

  // The verifier's verdict: "" when valid, else "bci: message".
  std::string verdict() {
    vm::VerifyError e;
    if (vm::verify_function(m, *f, e)) return "";
    CHECK(e.function == "f");
    return std::to_string(e.bci) + ": " + e.message;
  }
};

}  // namespace

TEST_CASE("verifier: a valid hand-built function passes") {
  Build t({Type::Int}, Type::Int, {Type::Int}, 2);
  uint16_t zero = t.kint(0);
  t.b.emit_u16(Op::ldc, zero);
  t.b.emit_u16(Op::store, 1);
  size_t to_check = t.b.emit_branch(Op::jump);
  size_t body = t.b.here();
  t.b.emit_iinc(1, 1);
  t.b.patch_branch(to_check, t.b.here());
  t.b.emit_u16(Op::load, 1);
  t.b.emit_u16(Op::load, 0);
  size_t latch = t.b.here();
  t.b.emit_branch_to(Op::if_icmplt, body);
  t.b.emit_u16(Op::load, 1);
  t.b.emit(Op::vret);
  t.f->loops.push_back({uint32_t(body), uint32_t(latch), false});
  CHECK(t.verdict() == "");
  vm::VerifyError e;
  vm::VerifyInfo info;
  REQUIRE(vm::verify_function(t.m, *t.f, e, info));
  CHECK(info.max_depth == 2);
  CHECK(info.unreachable == 0);
}

TEST_CASE("verifier: unreachable code must be well formed and is counted") {
  Build t({}, Type::Void, {}, 1);
  t.b.emit(Op::ret);
  t.b.emit_u16(Op::ldc, t.kint(1));  // never runs: not type checked, but decoded
  t.b.emit(Op::ret);
  vm::VerifyError e;
  vm::VerifyInfo info;
  REQUIRE(vm::verify_function(t.m, *t.f, e, info));
  CHECK(info.unreachable == 2);
  t.b.u8(0xfe);
  CHECK(t.verdict() == "5: invalid opcode 0xfe");
}

TEST_CASE("verifier: the hand-built fixtures of the runtime tests verify") {
  auto m = fixtures::make_module();
  vm::VerifyError e;
  bool ok = vm::verify_module(*m, e);
  INFO(e.function << "@" << e.bci << ": " << e.message);
  CHECK(ok);
}

TEST_CASE("verifier: a slowdown adds at most kMaxSlowdownNs a pass, at a site the module counts") {
  Build t({}, Type::Void);
  t.m.slowdown_sites = 2;
  t.b.emit_slowdown(1, vm::kMaxSlowdownNs);
  t.b.emit(Op::ret);
  CHECK(t.verdict() == "");
  Build u({}, Type::Void);
  u.m.slowdown_sites = 1;
  u.b.emit_slowdown(0, vm::kMaxSlowdownNs + 1);
  u.b.emit(Op::ret);
  CHECK(u.verdict() == "0: slowdown of 1000001 ns: at most 1000000 ns a pass");
  Build v({}, Type::Void);
  v.m.slowdown_sites = 1;
  v.b.emit_slowdown(0, uint32_t(-5));  // a negative operand is a huge one
  v.b.emit(Op::ret);
  CHECK(v.verdict() == "0: slowdown of 4294967291 ns: at most 1000000 ns a pass");
  Build w({}, Type::Void);
  w.m.slowdown_sites = 1;
  w.b.emit_slowdown(1, 100);  // its pass counter would be past the thread's last
  w.b.emit(Op::ret);
  CHECK(w.verdict() == "0: slowdown site 1 out of range (1 sites)");
}

TEST_CASE("verifier: stack underflow") {
  Build t({}, Type::Void);
  t.b.emit(Op::iadd);
  t.b.emit(Op::ret);
  CHECK(t.verdict() == "0: stack underflow: 'iadd' needs 2 values, the stack has 0");

  Build u({}, Type::Void);
  u.b.emit_u16(Op::ldc, u.kint(1));
  u.b.emit(Op::dup2);
  u.b.emit(Op::ret);
  CHECK(u.verdict() == "3: stack underflow: 'dup2' needs 2 values, the stack has 1");

  Build v({}, Type::Void);
  v.b.emit(Op::pop);
  v.b.emit(Op::ret);
  CHECK(v.verdict() == "0: stack underflow: 'pop' needs 1 value, the stack has 0");
}

TEST_CASE("verifier: type mismatches") {
  Build t({}, Type::Void);
  t.b.emit_u16(Op::ldc, t.kint(1));
  t.b.emit_u16(Op::ldc, t.kfloat(2.0));
  t.b.emit(Op::iadd);
  t.b.emit(Op::ret);
  CHECK(t.verdict() == "6: type mismatch: 'iadd' expects int as operand 2, found float (stack [int, float])");

  Build s({Type::Float}, Type::Void, {Type::Int});
  s.b.emit_u16(Op::load, 0);
  s.b.emit_u16(Op::store, 1);
  s.b.emit(Op::ret);
  CHECK(s.verdict() == "3: type mismatch: 'store' expects int as operand 1, found float (stack [float])");

  Build a({}, Type::Void);
  a.b.emit_u16(Op::ldc, a.kint(3));
  a.b.emit(Op::arraylength);
  a.b.emit(Op::pop);
  a.b.emit(Op::ret);
  CHECK(a.verdict() == "3: type mismatch: 'arraylength' expects a reference as operand 1, found int (stack [int])");

  Build r({}, Type::Int);
  r.b.emit_u16(Op::ldc, r.kfloat(1.0));
  r.b.emit(Op::vret);
  CHECK(r.verdict() == "3: type mismatch: 'vret' expects int as operand 1, found float (stack [float])");

  Build z({Type::IntArray}, Type::Void);  // float[] store into an int[]
  z.b.emit_u16(Op::load, 0);
  z.b.emit_u16(Op::ldc, z.kint(0));
  z.b.emit_u16(Op::ldc, z.kint(1));
  z.b.emit(Op::fastore);
  z.b.emit(Op::ret);
  CHECK(z.verdict() == "9: type mismatch: 'fastore' expects float[] as operand 1, found int[] (stack [int[], int, int])");

  Build c({}, Type::Void);  // a bool where an int is needed
  c.b.emit_u16(Op::ldc, c.k(Type::Bool, 1));
  c.b.emit(Op::ineg);
  c.b.emit(Op::pop);
  c.b.emit(Op::ret);
  CHECK(c.verdict() == "3: type mismatch: 'ineg' expects int as operand 1, found bool (stack [bool])");
}

TEST_CASE("verifier: strings and null") {
  // A string constant names one of the function's strings; the runtime makes it a
  // permanent string, so its index must be in range.
  Build ok({}, Type::Int, {Type::String});
  ok.f->strings = {"abc"};
  ok.b.emit_u16(Op::ldc, ok.k(Type::String, 0));
  ok.b.emit(Op::aconst_null);
  ok.b.emit(Op::sconcat);
  ok.b.emit_u16(Op::store, 0);
  ok.b.emit_u16(Op::load, 0);
  ok.b.emit_u16(Op::ldc, ok.kint(1));
  ok.b.emit(Op::sload);
  ok.b.emit_u8(Op::tostring, 0);
  ok.b.emit(Op::arraylength);
  ok.b.emit(Op::vret);
  CHECK(ok.verdict() == "");

  Build bad_index({}, Type::Void);
  bad_index.f->strings = {"abc"};
  bad_index.b.emit_u16(Op::ldc, bad_index.k(Type::String, 1));
  bad_index.b.emit(Op::pop);
  bad_index.b.emit(Op::ret);
  CHECK(bad_index.verdict() == "0: string constant #0 names string 1 of 1");

  // null is a value of every reference type, and of no other.
  Build null_ok({}, Type::Void, {Type::IntArray, Type::String});
  null_ok.b.emit(Op::aconst_null);
  null_ok.b.emit_u16(Op::store, 0);
  null_ok.b.emit(Op::aconst_null);
  null_ok.b.emit_u16(Op::store, 1);
  null_ok.b.emit_u16(Op::load, 0);
  null_ok.b.emit(Op::aconst_null);
  null_ok.b.emit(Op::acmpeq);
  null_ok.b.emit(Op::pop);
  null_ok.b.emit(Op::ret);
  CHECK(null_ok.verdict() == "");
  Build null_int({}, Type::Void, {Type::Int});
  null_int.b.emit(Op::aconst_null);
  null_int.b.emit_u16(Op::store, 0);
  null_int.b.emit(Op::ret);
  CHECK(null_int.verdict() == "1: type mismatch: 'store' expects int as operand 1, found null (stack [null])");

  // A string is no array, and an array no string.
  Build s_as_array({}, Type::Int);
  s_as_array.f->strings = {"abc"};
  s_as_array.b.emit_u16(Op::ldc, s_as_array.k(Type::String, 0));
  s_as_array.b.emit_u16(Op::ldc, s_as_array.kint(0));
  s_as_array.b.emit(Op::iaload);
  s_as_array.b.emit(Op::vret);
  CHECK(s_as_array.verdict() == "6: type mismatch: 'iaload' expects int[] as operand 1, found string (stack [string, int])");
  Build a_as_string({Type::IntArray}, Type::Int);
  a_as_string.b.emit_u16(Op::load, 0);
  a_as_string.b.emit_u16(Op::ldc, a_as_string.kint(0));
  a_as_string.b.emit(Op::sload);
  a_as_string.b.emit(Op::vret);
  CHECK(a_as_string.verdict() == "6: type mismatch: 'sload' expects string as operand 1, found int[] (stack [int[], int])");

  // tostring's kind operand says what it converts.
  Build kind({}, Type::Void);
  kind.b.emit_u16(Op::ldc, kind.kfloat(1.0));
  kind.b.emit_u8(Op::tostring, 0);
  kind.b.emit(Op::pop);
  kind.b.emit(Op::ret);
  CHECK(kind.verdict() == "3: type mismatch: 'tostring' expects int as operand 1, found float (stack [float])");
  Build kind4({}, Type::Void);
  kind4.b.emit_u16(Op::ldc, kind4.kint(1));
  kind4.b.emit_u8(Op::tostring, 4);
  kind4.b.emit(Op::pop);
  kind4.b.emit(Op::ret);
  CHECK(kind4.verdict() == "3: tostring kind 4 (must be 0 int, 1 float, 2 bool or 3 string)");
}

TEST_CASE("verifier: objects are typed by their class") {
  // Class 0 `Box` with fields v: int and next: Box, and one method `get` (function 1).
  Build t({}, Type::Int, {vm::class_type("Box")});
  vm::Type box = vm::class_type("Box");
  vm::Function* get = Build::add(t.m, "Box.get", {box}, Type::Int, {});
  get->code = {uint8_t(Op::load), 0, 0, uint8_t(Op::getfield), 0, 0, 0, 0, uint8_t(Op::vret)};
  get->max_stack = 1;
  t.m.classes.push_back({"Box", box, {{"v", Type::Int}, {"next", box}}, {1}, -1});
  t.b.emit_u16(Op::newobject, 0);
  t.b.emit_u16(Op::store, 0);
  t.b.emit_u16(Op::load, 0);
  t.b.emit(Op::aconst_null);
  t.b.emit_u16u16(Op::putfield, 0, 1);  // next = null
  t.b.emit_u16(Op::load, 0);
  t.b.emit_u16u16(Op::invokevirtual, 0, 0);
  t.b.emit(Op::vret);
  CHECK(t.verdict() == "");
  vm::VerifyError e;
  CHECK(vm::verify_function(t.m, *get, e));

  Build wrong_field({}, Type::Void);
  wrong_field.m.classes.push_back({"Box", box, {{"v", Type::Int}}, {}, -1});
  wrong_field.b.emit_u16(Op::newobject, 0);
  wrong_field.b.emit_u16(Op::ldc, wrong_field.kfloat(1.0));
  wrong_field.b.emit_u16u16(Op::putfield, 0, 0);
  wrong_field.b.emit(Op::ret);
  CHECK(wrong_field.verdict() == "6: type mismatch: 'putfield' expects int as operand 2, found float (stack [Box, float])");

  Build not_an_object({}, Type::Int);
  not_an_object.m.classes.push_back({"Box", box, {{"v", Type::Int}}, {}, -1});
  not_an_object.b.emit_u16(Op::ldc, not_an_object.kint(8));
  not_an_object.b.emit_u16u16(Op::getfield, 0, 0);
  not_an_object.b.emit(Op::vret);
  CHECK(not_an_object.verdict() == "3: type mismatch: 'getfield' expects Box as operand 1, found int (stack [int])");

  Build out_of_range({}, Type::Void);
  out_of_range.m.classes.push_back({"Box", box, {{"v", Type::Int}}, {}, -1});
  out_of_range.b.emit_u16(Op::newobject, 0);
  out_of_range.b.emit_u16u16(Op::getfield, 0, 1);
  out_of_range.b.emit(Op::pop);
  out_of_range.b.emit(Op::ret);
  CHECK(out_of_range.verdict() == "3: field 1 out of range (Box has 1 field)");
  Build no_class({}, Type::Void);
  no_class.b.emit_u16(Op::newobject, 0);
  no_class.b.emit(Op::pop);
  no_class.b.emit(Op::ret);
  CHECK(no_class.verdict() == "0: class index 0 out of range (0 classes)");

  // A method slot must name a function whose receiver is of the class.
  Build bad_method({}, Type::Void);
  bad_method.m.classes.push_back({"Box", box, {}, {0}, -1});  // slot 0 is `f` itself, which takes no Box
  bad_method.b.emit_u16(Op::newobject, 0);
  bad_method.b.emit_u16u16(Op::invokevirtual, 0, 0);
  bad_method.b.emit(Op::ret);
  CHECK(bad_method.verdict() == "3: method slot 0 of Box is 'f', whose first parameter is not Box or a supertype");
}

TEST_CASE("verifier: interface calls and itables") {
  // Class 0 `Box` implements interface 1 `Shape`, whose method `area` (function 1, no
  // body) Box.area (function 2) implements: selector 0.
  vm::Type box = vm::class_type("Box"), shape = vm::class_type("Shape");
  auto module = [&](Build& t, std::vector<uint16_t> itable, bool implements = true) {
    Build::add(t.m, "Shape.area", {shape}, Type::Int, {});
    Build::add(t.m, "Box.area", {box}, Type::Int, {});
    t.m.classes.push_back({"Box", box, {}, {2}, -1});
    t.m.classes.push_back({"Shape", shape, {}, {1}, -1, -1, true, true});
    if (implements) t.m.classes[0].interfaces = {1};
    t.m.classes[0].itable = std::move(itable);
    t.m.selector_count = 1;
  };
  auto module_problem = [](const Build& t) {
    vm::VerifyError e;
    return vm::verify_module(t.m, e) ? std::string() : e.message;
  };
  Build t({}, Type::Int, {shape});
  module(t, {2});
  t.b.emit_u16(Op::newobject, 0);
  t.b.emit_u16(Op::store, 0);  // a Box stored as a Shape
  t.b.emit_u16(Op::load, 0);
  t.b.emit_u16u16(Op::invokeinterface, 1, 0);
  t.b.emit(Op::vret);
  CHECK(t.verdict() == "");
  CHECK(module_problem(t).find("class 'Box'") == std::string::npos);

  Build on_class({}, Type::Int);
  module(on_class, {2});
  on_class.b.emit_u16(Op::newobject, 0);
  on_class.b.emit_u16u16(Op::invokeinterface, 0, 0);
  on_class.b.emit(Op::vret);
  CHECK(on_class.verdict() == "3: invokeinterface on 'Box', which is not an interface");

  Build not_implementing({}, Type::Void, {shape});
  module(not_implementing, {}, false);
  not_implementing.b.emit_u16(Op::newobject, 0);
  not_implementing.b.emit_u16(Op::store, 0);
  not_implementing.b.emit(Op::ret);
  CHECK(not_implementing.verdict() == "3: type mismatch: 'store' expects Shape as operand 1, found Box (stack [Box])");

  Build slot({}, Type::Int, {shape});
  module(slot, {2});
  slot.b.emit_u16(Op::load, 0);
  slot.b.emit_u16u16(Op::invokeinterface, 1, 1);
  slot.b.emit(Op::vret);
  CHECK(slot.verdict() == "3: method slot 1 out of range (Shape has 1 method)");

  // The module: a class's itable covers each interface it implements, with methods that fit.
  Build no_entry({}, Type::Void);
  module(no_entry, {vm::kNoMethod});
  CHECK(module_problem(no_entry) == "class 'Box': no itable entry for Shape's method slot 0");
  Build wrong_entry({}, Type::Void);
  module(wrong_entry, {0});  // `f`, which takes no Box
  CHECK(module_problem(wrong_entry) == "class 'Box': itable entry 'f' does not fit Shape.area");
  Build class_as_interface({}, Type::Void);
  module(class_as_interface, {}, false);
  class_as_interface.m.classes[1].interfaces = {0};
  CHECK(module_problem(class_as_interface) == "class 'Shape': implements 'Box', which is not an interface");
}

TEST_CASE("verifier: call, native, print and arraycopy are typed by their operand") {
  Build t({}, Type::Void);
  vm::Function* g = Build::add(t.m, "g", {Type::Int, Type::Float}, Type::Int, {});
  vm::CodeBuilder gb(g->code);
  g->max_stack = 1;
  gb.emit_u16(Op::load, 0);
  gb.emit(Op::vret);
  t.b.emit_u16(Op::ldc, t.kint(1));
  t.b.emit_u16(Op::ldc, t.kint(2));
  t.b.emit_u16(Op::call, 1);
  t.b.emit(Op::pop);
  t.b.emit(Op::ret);
  CHECK(t.verdict() == "6: type mismatch: 'call' expects float as operand 2, found int (stack [int, int])");

  Build n({Type::IntArray, Type::FloatArray}, Type::Void);
  uint16_t zero = n.kint(0);
  n.b.emit_u16(Op::load, 0);
  n.b.emit_u16(Op::ldc, zero);
  n.b.emit_u16(Op::load, 1);
  n.b.emit_u16(Op::ldc, zero);
  n.b.emit_u16(Op::ldc, zero);
  n.b.emit_u16(Op::native, uint16_t(vm::NativeId::arraycopy));
  n.b.emit(Op::ret);
  CHECK(n.verdict() == "15: arraycopy needs two arrays of the same type, got int[] and float[]");

  Build p({}, Type::Void);
  p.f->prints.push_back({{{Type::Int, 0}, {Type::Float, 0}}});
  p.b.emit_u16(Op::ldc, p.kint(1));
  p.b.emit_u16(Op::ldc, 0);
  p.b.emit_u16(Op::print, 0);
  p.b.emit(Op::ret);
  CHECK(p.verdict() == "6: type mismatch: 'print' expects float as operand 2, found int (stack [int, int])");

  Build j({}, Type::Void);  // join's result is void: nothing to pop
  j.b.emit_u16(Op::ldc, j.kint(1));
  j.b.emit_u16(Op::native, uint16_t(vm::NativeId::join));
  j.b.emit(Op::pop);
  j.b.emit(Op::ret);
  CHECK(j.verdict() == "6: stack underflow: 'pop' needs 1 value, the stack has 0");
}

TEST_CASE("verifier: branch targets must be instruction starts inside the code") {
  Build t({}, Type::Void);
  t.b.op(Op::jump);
  t.b.i32(2);  // into the jump's own operand
  t.b.emit(Op::ret);
  CHECK(t.verdict() == "0: branch target 2 is not the start of an instruction");

  Build u({}, Type::Void);
  u.b.op(Op::jump);
  u.b.i32(100);
  u.b.emit(Op::ret);
  CHECK(u.verdict() == "0: branch target 100 is outside the code (0..5)");

  Build v({}, Type::Void);
  v.b.emit(Op::nop);
  v.b.op(Op::jump);
  v.b.i32(-2);
  CHECK(v.verdict() == "1: branch target -1 is outside the code (0..5)");

  Build w({}, Type::Void, {Type::Int, Type::Int});
  w.b.op(Op::forloop);
  w.b.u16(0);
  w.b.u16(1);
  w.b.i32(3);
  w.b.emit(Op::ret);
  CHECK(w.verdict() == "0: branch target 3 is not the start of an instruction");
}

TEST_CASE("verifier: no path may fall off the end of the code") {
  Build t({}, Type::Void);
  t.b.emit_u16(Op::ldc, t.kint(1));
  t.b.emit(Op::pop);
  CHECK(t.verdict() == "3: execution falls off the end of the code after 'pop'");

  Build e({}, Type::Void);
  e.f->lines.clear();
  CHECK(e.verdict() == "0: execution falls off the end of the code (the code is empty)");

  Build c({Type::Bool}, Type::Void);  // the untaken side of a conditional branch at the end
  c.b.emit_u16(Op::load, 0);
  c.b.emit_branch_to(Op::iftrue, 0);
  CHECK(c.verdict() == "3: execution falls off the end of the code after 'iftrue'");
}

TEST_CASE("verifier: stack shapes must agree where paths merge") {
  Build t({Type::Bool}, Type::Void);
  t.b.emit_u16(Op::load, 0);
  size_t br = t.b.emit_branch(Op::iffalse);
  t.b.emit_u16(Op::ldc, t.kint(1));  // only on the fall-through path
  t.b.patch_branch(br, t.b.here());
  t.b.emit(Op::ret);
  CHECK(t.verdict() == "8: stack shape mismatch at bci 11: [int] from bci 8, [] on another path");

  Build u({Type::Bool}, Type::Void);  // same depth, different types
  u.b.emit_u16(Op::load, 0);
  size_t to_else = u.b.emit_branch(Op::iffalse);
  u.b.emit_u16(Op::ldc, u.kint(1));
  size_t to_end = u.b.emit_branch(Op::jump);
  u.b.patch_branch(to_else, u.b.here());
  u.b.emit_u16(Op::ldc, u.kfloat(1.0));
  u.b.patch_branch(to_end, u.b.here());
  u.b.emit(Op::pop);
  u.b.emit(Op::ret);
  CHECK(u.verdict() == "16: stack shape mismatch at bci 19: [float] from bci 16, [int] on another path");

  Build loop({}, Type::Void);  // a loop that grows the stack on each iteration
  size_t head = loop.b.here();
  loop.b.emit_u16(Op::ldc, loop.kint(1));
  loop.b.emit_branch_to(Op::jump, head);
  CHECK(loop.verdict() == "3: stack shape mismatch at bci 0: [int] from bci 3, [] on another path");
}

TEST_CASE("verifier: an array local is stored before it is read on every path") {
  // A local's slot is zero on entry and zero is no array: reading one unstored would
  // hand the interpreter a null array (tests/fuzz/fuzz_verifier runs accepted code).
  Build t({}, Type::Int, {Type::IntArray}, 1);
  t.b.emit_u16(Op::load, 0);
  t.b.emit(Op::arraylength);
  t.b.emit(Op::vret);
  CHECK(t.verdict() == "0: local 0 (an int[]) is read before it is stored on some path");

  Build one_path({Type::Bool}, Type::Int, {Type::FloatArray}, 1);  // stored on the fall-through path only
  one_path.b.emit_u16(Op::load, 0);
  size_t skip = one_path.b.emit_branch(Op::iffalse);
  one_path.b.emit_u16(Op::ldc, one_path.kint(2));
  one_path.b.emit_u8(Op::newarray, 1);
  one_path.b.emit_u16(Op::store, 1);
  one_path.b.patch_branch(skip, one_path.b.here());
  one_path.b.emit_u16(Op::load, 1);
  one_path.b.emit(Op::arraylength);
  one_path.b.emit(Op::vret);
  CHECK(one_path.verdict() == "16: local 1 (a float[]) is read before it is stored on some path");

  Build both({Type::Bool, Type::IntArray}, Type::Int, {Type::IntArray}, 1);  // a parameter, and a store on both paths
  both.b.emit_u16(Op::load, 0);
  size_t to_else = both.b.emit_branch(Op::iffalse);
  both.b.emit_u16(Op::load, 1);
  both.b.emit_u16(Op::store, 2);
  size_t to_end = both.b.emit_branch(Op::jump);
  both.b.patch_branch(to_else, both.b.here());
  both.b.emit_u16(Op::ldc, both.kint(1));
  both.b.emit_u8(Op::newarray, 0);
  both.b.emit_u16(Op::store, 2);
  both.b.patch_branch(to_end, both.b.here());
  both.b.emit_u16(Op::load, 2);
  both.b.emit(Op::arraylength);
  both.b.emit(Op::vret);
  CHECK(both.verdict() == "");

  Build scalars({}, Type::Int, {Type::Int}, 1);  // an int local's zero is an int
  scalars.b.emit_u16(Op::load, 0);
  scalars.b.emit(Op::vret);
  CHECK(scalars.verdict() == "");
}

TEST_CASE("verifier: operand ranges") {
  struct Case {
    Op op;
    uint16_t operand;
    const char* message;
  };
  const Case cases[] = {
      {Op::load, 5, "local index 5 out of range (f has 1 locals)"},
      {Op::store, 1, "local index 1 out of range (f has 1 locals)"},
      {Op::ldc, 0, "constant index 0 out of range (0 constants)"},
      {Op::gload, 0, "global index 0 out of range (0 globals)"},
      {Op::gstore, 3, "global index 3 out of range (0 globals)"},
      {Op::call, 1, "function index 1 out of range (1 functions)"},
      {Op::spawn, 7, "function index 7 out of range (1 functions)"},
      {Op::native, 6, "native id 6 out of range (6 natives)"},
      {Op::print, 0, "print descriptor 0 out of range (0 descriptors)"},
  };
  for (auto& c : cases) {
    INFO(vm::op_info(c.op).name);
    Build t({Type::Int}, Type::Void);
    t.b.emit_u16(c.op, c.operand);
    t.b.emit(Op::ret);
    CHECK(t.verdict() == std::string("0: ") + c.message);
  }
  Build iinc({Type::Int}, Type::Void);
  iinc.b.emit_iinc(2, 1);
  iinc.b.emit(Op::ret);
  CHECK(iinc.verdict() == "0: local index 2 out of range (f has 1 locals)");

  Build na({Type::Int}, Type::Void);
  na.b.emit_u16(Op::load, 0);
  na.b.emit_u8(Op::newarray, 3);
  na.b.emit(Op::pop);
  na.b.emit(Op::ret);
  CHECK(na.verdict() == "3: newarray kind 3 (must be 0 for int, 1 for float or 2 for bool)");

  Build an({Type::Int}, Type::Void);
  an.f->types = {Type::IntArray};
  an.b.emit_u16(Op::load, 0);
  an.b.emit_u16(Op::anewarray, 1);
  an.b.emit(Op::pop);
  an.b.emit(Op::ret);
  CHECK(an.verdict() == "3: type index 1 out of range (1 types)");
  an.f->code[4] = 0;
  CHECK(an.verdict() == "3: anewarray makes arrays of references, not int[]");

  Build ps({}, Type::Void);
  ps.f->prints.push_back({{{Type::Void, 3}}});
  ps.b.emit_u16(Op::print, 0);
  ps.b.emit(Op::ret);
  CHECK(ps.verdict() == "0: print descriptor 0 uses string 3 of 0");
}

TEST_CASE("verifier: iinc and forloop need int locals") {
  Build t({Type::Float}, Type::Void);
  t.b.emit_iinc(0, 1);
  t.b.emit(Op::ret);
  CHECK(t.verdict() == "0: 'iinc' needs an int local, but local 0 is float");

  Build u({Type::Int, Type::Bool}, Type::Void);
  u.b.emit_forloop(0, 1, 0);
  u.b.emit(Op::ret);
  CHECK(u.verdict() == "0: 'forloop' needs an int local, but local 1 is bool");
}

TEST_CASE("verifier: ialoadll and faloadll read an array local of their kind at an int local, stored first") {
  Build ok({Type::FloatArray, Type::Int}, Type::Float);
  ok.b.emit_u16u16(Op::faloadll, 0, 1);
  ok.b.emit(Op::vret);
  CHECK(ok.verdict() == "");

  Build kind({Type::IntArray, Type::Int}, Type::Float);
  kind.b.emit_u16u16(Op::faloadll, 0, 1);
  kind.b.emit(Op::vret);
  CHECK(kind.verdict() == "0: 'faloadll' needs a local of type float[], local 0 is int[]");

  Build index({Type::IntArray, Type::Float}, Type::Int);
  index.b.emit_u16u16(Op::ialoadll, 0, 1);
  index.b.emit(Op::vret);
  CHECK(index.verdict() == "0: 'ialoadll' needs an int local, but local 1 is float");

  Build unstored({Type::Int}, Type::Int, {Type::IntArray}, 1);
  unstored.b.emit_u16u16(Op::ialoadll, 1, 0);
  unstored.b.emit(Op::vret);
  CHECK(unstored.verdict() == "0: local 1 (an int[]) is read before it is stored on some path");
}

TEST_CASE("verifier: iastorell and fastorell store a value of their kind into an array local of their kind at an int local") {
  Build ok({Type::FloatArray, Type::Int, Type::Float}, Type::Void);
  ok.b.emit_u16(Op::load, 2);
  ok.b.emit_u16u16(Op::fastorell, 0, 1);
  ok.b.emit(Op::ret);
  CHECK(ok.verdict() == "");

  Build kind({Type::IntArray, Type::Int, Type::Float}, Type::Void);
  kind.b.emit_u16(Op::load, 2);
  kind.b.emit_u16u16(Op::fastorell, 0, 1);
  kind.b.emit(Op::ret);
  CHECK(kind.verdict() == "3: 'fastorell' needs a local of type float[], local 0 is int[]");

  Build value({Type::IntArray, Type::Int, Type::Float}, Type::Void);
  value.b.emit_u16(Op::load, 2);
  value.b.emit_u16u16(Op::iastorell, 0, 1);
  value.b.emit(Op::ret);
  CHECK(value.verdict() == "3: type mismatch: 'iastorell' expects int as operand 1, found float (stack [float])");

  Build unstored({Type::Int}, Type::Void, {Type::IntArray}, 1);
  unstored.b.emit_u16(Op::load, 0);
  unstored.b.emit_u16u16(Op::iastorell, 1, 0);
  unstored.b.emit(Op::ret);
  CHECK(unstored.verdict() == "3: local 1 (an int[]) is read before it is stored on some path");
}

TEST_CASE("verifier: fmulll reads two float locals") {
  Build ok({Type::Float, Type::Float}, Type::Float);
  ok.b.emit_u16u16(Op::fmulll, 0, 1);
  ok.b.emit(Op::vret);
  CHECK(ok.verdict() == "");

  Build second({Type::Float, Type::Int}, Type::Float);
  second.b.emit_u16u16(Op::fmulll, 0, 1);
  second.b.emit(Op::vret);
  CHECK(second.verdict() == "0: 'fmulll' needs float locals, local 1 is int");

  Build first({Type::FloatArray, Type::Float}, Type::Float);
  first.b.emit_u16u16(Op::fmulll, 0, 1);
  first.b.emit(Op::vret);
  CHECK(first.verdict() == "0: 'fmulll' needs float locals, local 0 is float[]");

  Build range({Type::Float}, Type::Float);
  range.b.emit_u16u16(Op::fmulll, 0, 1);
  range.b.emit(Op::vret);
  CHECK(range.verdict() == "0: local index 1 out of range (f has 1 locals)");
}

TEST_CASE("verifier: max_stack is never exceeded") {
  Build t({}, Type::Void, {}, 1);
  t.b.emit_u16(Op::ldc, t.kint(1));
  t.b.emit(Op::dup);
  t.b.emit(Op::pop);
  t.b.emit(Op::pop);
  t.b.emit(Op::ret);
  CHECK(t.verdict() == "3: stack depth 2 exceeds max_stack 1");
}

TEST_CASE("verifier: ret and vret must match the function's result") {
  Build t({}, Type::Int);
  t.b.emit(Op::ret);
  CHECK(t.verdict() == "0: 'ret' in a function that returns int");
  Build u({}, Type::Void);
  u.b.emit_u16(Op::ldc, u.kint(1));
  u.b.emit(Op::vret);
  CHECK(u.verdict() == "3: 'vret' in a function without a result");
}

TEST_CASE("verifier: malformed code") {
  Build t({}, Type::Void);
  t.b.u8(0xff);
  CHECK(t.verdict() == "0: invalid opcode 0xff");
  Build u({}, Type::Void);
  u.b.emit(Op::nop);
  u.b.op(Op::ldc);
  u.b.u8(0);  // one operand byte of two
  CHECK(u.verdict() == "1: truncated instruction 'ldc' at the end of the code");
}

TEST_CASE("verifier: function signature, constants, line and loop tables") {
  Build l({Type::Int}, Type::Void);
  l.f->local_types[0] = Type::Float;
  l.b.emit(Op::ret);
  CHECK(l.verdict() == "0: local 0 is float but parameter 0 is int");

  Build k({}, Type::Void);
  k.k(Type::IntArray, 0);
  k.b.emit(Op::ret);
  CHECK(k.verdict() == "0: constant #0 has type int[] (must be int, float, bool, string or a function)");

  Build b({}, Type::Void);
  b.k(Type::Bool, 2);
  b.b.emit(Op::ret);
  CHECK(b.verdict() == "0: bool constant #0 is 2 (must be 0 or 1)");

  Build n({}, Type::Void);
  n.f->lines = {{3, 1}};
  n.b.emit(Op::nop);
  n.b.emit(Op::ret);
  CHECK(n.verdict() == "0: the line table must start at bci 0");

  Build s({}, Type::Void);
  s.f->lines = {{0, 1}, {1, 2}, {1, 3}};
  s.b.emit(Op::nop);
  s.b.emit(Op::ret);
  CHECK(s.verdict() == "1: the line table is not sorted by bci");

  Build o({}, Type::Void);
  o.b.emit(Op::nop);
  o.b.emit_branch_to(Op::jump, 0);
  o.f->loops = {{0, 0, false}};  // the latch must be the branch
  CHECK(o.verdict() == "0: loop latch at bci 0 is not a branch to the loop header 0");

  Build c({}, Type::Void);
  c.b.emit(Op::nop);
  c.b.emit_branch_to(Op::jump, 0);
  c.f->loops = {{0, 1, true}};
  CHECK(c.verdict() == "1: a counted loop's latch must be 'forloop'");
}

TEST_CASE("verifier: module level checks") {
  vm::Module m;
  vm::VerifyError e;
  CHECK_FALSE(vm::verify_module(m, e));
  CHECK(e.message == "the module has no functions");

  Build t({}, Type::Void);
  t.b.emit(Op::ret);
  CHECK(vm::verify_module(t.m, e));
  t.m.main_index = 1;
  CHECK_FALSE(vm::verify_module(t.m, e));
  CHECK(e.message == "main index 1 out of range (1 functions)");
  t.m.main_index = 0;
  t.f->index = 4;
  CHECK_FALSE(vm::verify_module(t.m, e));
  CHECK(e.message == "function index 4 but it is at position 0 in the module");
  t.f->index = 0;
  t.m.globals.push_back({"arr", Type::IntArray, 0});
  CHECK(vm::verify_module(t.m, e));  // a reference global starts null
  t.m.globals.back().init_bits = 8;
  CHECK_FALSE(vm::verify_module(t.m, e));
  CHECK(e.message == "global 'arr' of type int[] must start null");
  t.m.globals.back() = {"s", Type::String, 0, "text", true};
  CHECK(vm::verify_module(t.m, e));
  t.m.globals.back() = {"a", Type::FloatArray, 0, "text", true};
  CHECK_FALSE(vm::verify_module(t.m, e));
  CHECK(e.message == "global 'a' of type float[] must start null");
  t.m.globals.back() = {"n", Type::Null, 0};
  CHECK_FALSE(vm::verify_module(t.m, e));
  CHECK(e.message == "global 'n' has type null");
}

namespace {

// Compiles `src` and checks that it verifies with max_stack exactly the deepest stack.
void check_compiled_verifies(const std::string& name, const std::string& src) {
  vm::CompileError ce;
  auto m = vm::compile_source(name, src, ce);
  if (!m) {
    // Programs that are meant not to compile must fail with a user error, not an internal one.
    CHECK(ce.message.find("internal error") == std::string::npos);
    return;
  }
  for (auto& f : m->functions) {
    vm::VerifyError e;
    vm::VerifyInfo info;
    bool ok = vm::verify_function(*m, *f, e, info);
    INFO(name << ": " << f->name << "@" << e.bci << ": " << e.message);
    REQUIRE(ok);
    CHECK(info.max_depth == f->max_stack);
    CHECK(info.unreachable == 0);  // the compiler emits no dead code
  }
}

}  // namespace

TEST_CASE("verifier: every program the compiler accepts verifies, with exact max_stack") {
  const char* programs[] = {
      "fn main() {}",
      "fn main(): int { var x = 0; for i in 0..10 { x += i; } return x; }",
      "fn f(a: bool, b: bool, c: bool): bool { return a && (b || !c) && !(a || b); }\nfn main() { print(f(true, false, true)); }",
      "fn f(x: float): int { if (x < 1.0 || x != x) { return 1; } else if (!(x >= 2.0)) { return 2; } return 3; }\nfn main() {}",
      "fn main() { var a = new int[4]; var b = new float[4]; a[1] += a[0] * 2; b[2] -= float(a[1]); print(a, b, len(b)); }",
      "fn main() { var i = 0; while (true) { i += 1; if (i > 10) { break; } if (i % 2 == 0) { continue; } print(i); } }",
      "fn main() { for i in 0..3 { for j in i..3 { if (j == 2) { break; } continue; } } }",
      "fn w(a: int[]) { atomic_add(a, 0, 1); }\nfn main() { var a = new int[1]; var h = spawn w(a); join(h); print(crc32(a, 0, 1), nanotime() > 0); }",
      "fn main() { var x = true; var y = x == (1 < 2) != (2.0 >= 1.0) & x | x ^ !x; print(y && x || y); }",
      "fn f(): int { while (true) { } }\nfn main() {}",
      "fn f(n: int): int { for i in 0..n { return i; } return 0; }\nfn main() {}",
      "fn f(b: bool): int { while (b || f(0) > 1) { return 1; } return 2; }\nfn main() {}",
      "fn main() { var b = 1 < 2 && (2 < 3 || 4 > 5); var c = !b; print(b, c, !(b && c)); }",
      "fn g(a: int, b: int, c: int, d: int): int { return a + b * (c - d); }\nfn main() { print(g(1, g(2, 3, 4, 5), 6, g(7, 8, 9, 10))); }",
  };
  for (const char* src : programs) check_compiled_verifies("inline.mini", src);

  // And every .mini file in the repository's test and example folders.
  namespace fs = std::filesystem;
  const fs::path root = MINIVM_SOURCE_DIR;
  int files = 0;
  for (const char* dir : {"tests/programs", "examples", "bench"}) {
    std::error_code ec;
    REQUIRE(fs::is_directory(root / dir, ec));
    for (auto& entry : fs::recursive_directory_iterator(root / dir, ec)) {
      if (entry.path().extension() != ".mini") continue;
      std::ifstream in(entry.path());
      std::stringstream ss;
      ss << in.rdbuf();
      check_compiled_verifies(entry.path().string(), ss.str());
      files++;
    }
  }
  // The repository holds hundreds; a few would mean the folders were not found.
  CHECK(files >= 100);
  WARN("verified the compiled output of " << files << " .mini files from the repository");
}

TEST_CASE("verifier: mutated programs compile to verified code or fail with a user error") {
  // Token-level mutations of a program that uses most of the language: whatever the
  // front end accepts must verify; whatever it rejects must be a positioned user error.
  const std::string seed = R"(
var g: int = 3;
var f0: float = -0.5;
fn h(a: int[], n: int): int {
  var s = 0;
  for i in 0..n { if (a[i] > 2 && s < 100 || !(i == 3)) { s += a[i]; continue; } else { break; } }
  while (s > 0 && g != 0) { s -= 1; if (s % 7 == 0) { return s; } }
  return s * 2;
}
fn fl(x: float, y: float): bool { return x < y || x != x && !(y >= 1.0); }
fn main(): int {
  var a = new int[8];
  var b = new float[4];
  a[2] += 5; b[1] = float(a[2]) * 1.5;
  var ok = fl(b[1], 2.0) & true;
  while (true) { g += 1; if (g > 9) { break; } }
  print("r", h(a, len(a)), ok, sqrt(b[1]), int(b[1]));
  var t = spawn h(a, 3);
  join(t);
  return h(a, 2);
}
)";
  std::vector<std::string> toks;
  for (auto& t : vm::tokenize(seed))
    if (t.kind != vm::Tok::End) toks.push_back(std::string(t.text));
  // Same-class replacements keep many mutants well-formed, so they reach the checker
  // and the code generator; the structural edits exercise the parser's errors.
  const std::vector<std::vector<std::string>> classes = {
      {"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", ">>>", "<", "<=", ">", ">=", "==", "!=", "&&", "||"},
      {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="},
      {"0", "1", "7", "2.5", "-1.0", "true", "false", "g", "s", "n", "i", "a", "b", "x", "ok", "f0"},
      {"break", "continue"},
      {"int", "float", "bool", "int[]"},
  };
  const std::vector<std::string> pool = {"{", "}", "(", ")", ";", "return", "!", "-", "var", "[", "]", ",", "if",
                                         "else", "while", "for", "in", "..", "h", "print", "\"s\"", "spawn"};
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto rnd = [&](size_t n) {  // xorshift: deterministic across platforms
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return size_t(state % n);
  };
  int accepted = 0, rejected = 0;
  for (int iter = 0; iter < 5000; iter++) {
    std::vector<std::string> t = toks;
    int edits = 1 + int(rnd(2));
    for (int e = 0; e < edits; e++) {
      size_t at = rnd(t.size());
      switch (rnd(6)) {
        case 0: t.erase(t.begin() + long(at)); break;
        case 1: t.insert(t.begin() + long(at), t[at]); break;
        case 2: if (at + 1 < t.size()) std::swap(t[at], t[at + 1]); break;
        case 3: t[at] = pool[rnd(pool.size())]; break;
        default:
          for (auto& cls : classes)
            if (std::find(cls.begin(), cls.end(), t[at]) != cls.end()) t[at] = cls[rnd(cls.size())];
          break;
      }
    }
    std::string src;
    for (auto& s : t) src += s + " ";
    vm::CompileError ce;
    auto m = vm::compile_source("fuzz.mini", src, ce);
    if (!m) {
      INFO(src << "\n" << ce.format());
      CHECK(ce.message.find("internal error") == std::string::npos);
      CHECK(ce.line >= 1);
      CHECK(ce.col >= 1);
      rejected++;
      continue;
    }
    accepted++;
    for (auto& f : m->functions) {
      vm::VerifyError e;
      vm::VerifyInfo info;
      bool ok = vm::verify_function(*m, *f, e, info);
      INFO(src << "\n" << f->name << "@" << e.bci << ": " << e.message);
      REQUIRE(ok);
      CHECK(info.max_depth == f->max_stack);
      CHECK(info.unreachable == 0);
    }
  }
  WARN("mutants accepted: " << accepted << ", rejected: " << rejected);
  CHECK(accepted > 300);  // the mutations must exercise the code generator, not only the parser
  CHECK(rejected > 300);
}
