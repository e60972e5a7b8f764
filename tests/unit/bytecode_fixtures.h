// Hand-built bytecode for tests of the runtime and the interpreter that must not depend
// on the front end: small functions written with vm::CodeBuilder.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "vm/builtins.h"
#include "vm/bytecode.h"

namespace fixtures {

inline vm::Function& add_function(vm::Module& m, std::string name, std::vector<vm::Type> params, vm::Type result,
                                  std::vector<vm::Type> extra_locals) {
  auto fn = std::make_unique<vm::Function>();
  fn->name = std::move(name);
  fn->index = uint16_t(m.functions.size());
  fn->line = 1;
  fn->params = params;
  fn->result = result;
  fn->local_types = params;
  for (auto t : extra_locals) fn->local_types.push_back(t);
  for (size_t i = 0; i < fn->local_types.size(); i++) fn->local_names.push_back("l" + std::to_string(i));
  fn->lines.push_back({0, 1});
  m.functions.push_back(std::move(fn));
  return *m.functions.back();
}

inline uint16_t int_constant(vm::Function& fn, int64_t v) {
  fn.constants.push_back({vm::Type::Int, v});
  return uint16_t(fn.constants.size() - 1);
}

// @noinline fn sum_to(n: int): int { var s = 0; var i = 0; while (i < n) { s += i; i += 1; } return s; }
// A while loop: its backward branch polls in the interpreter. Never inlined, so that
// busy's call in its loop is a real one and the tests see, walk and unwind its frame.
inline void add_sum_to(vm::Module& m) {
  using vm::Op;
  vm::Function& fn = add_function(m, "sum_to", {vm::Type::Int}, vm::Type::Int, {vm::Type::Int, vm::Type::Int});
  fn.inline_hint = vm::InlineHint::NoInline;
  uint16_t zero = int_constant(fn, 0);
  vm::CodeBuilder b(fn.code);
  b.emit_u16(Op::ldc, zero);
  b.emit_u16(Op::store, 1);
  b.emit_u16(Op::ldc, zero);
  b.emit_u16(Op::store, 2);
  size_t to_check = b.emit_branch(Op::jump);
  size_t body = b.here();
  fn.lines.push_back({uint32_t(body), 2});
  b.emit_u16(Op::load, 1);
  b.emit_u16(Op::load, 2);
  b.emit(Op::iadd);
  b.emit_u16(Op::store, 1);
  b.emit_iinc(2, 1);
  size_t check = b.here();
  b.patch_branch(to_check, check);
  fn.lines.push_back({uint32_t(check), 3});
  b.emit_u16(Op::load, 2);
  b.emit_u16(Op::load, 0);
  size_t latch = b.here();
  b.emit_branch_to(Op::if_icmplt, body);
  fn.lines.push_back({uint32_t(b.here()), 4});
  b.emit_u16(Op::load, 1);
  b.emit(Op::vret);
  fn.loops.push_back({uint32_t(body), uint32_t(latch), false});
  fn.max_stack = 2;
}

// fn fib(n: int): int { if (n < 2) { return n; } return fib(n - 1) + fib(n - 2); }
inline void add_fib(vm::Module& m) {
  using vm::Op;
  vm::Function& fn = add_function(m, "fib", {vm::Type::Int}, vm::Type::Int, {});
  uint16_t one = int_constant(fn, 1), two = int_constant(fn, 2);
  vm::CodeBuilder b(fn.code);
  b.emit_u16(Op::load, 0);
  b.emit_u16(Op::ldc, two);
  size_t to_rec = b.emit_branch(Op::if_icmpge);
  b.emit_u16(Op::load, 0);
  b.emit(Op::vret);
  b.patch_branch(to_rec, b.here());
  b.emit_u16(Op::load, 0);
  b.emit_u16(Op::ldc, one);
  b.emit(Op::isub);
  b.emit_u16(Op::call, fn.index);
  b.emit_u16(Op::load, 0);
  b.emit_u16(Op::ldc, two);
  b.emit(Op::isub);
  b.emit_u16(Op::call, fn.index);
  b.emit(Op::iadd);
  b.emit(Op::vret);
  fn.max_stack = 3;
}

// fn depth(n: int): int { if (n == 0) { return 0; } return depth(n - 1) + 1; }
// Every return polls: a deep recursion unwinding through polls.
inline void add_depth(vm::Module& m) {
  using vm::Op;
  vm::Function& fn = add_function(m, "depth", {vm::Type::Int}, vm::Type::Int, {});
  fn.inline_hint = vm::InlineHint::NoInline;  // one physical frame per level, compiled too
  uint16_t zero = int_constant(fn, 0), one = int_constant(fn, 1);
  vm::CodeBuilder b(fn.code);
  b.emit_u16(Op::load, 0);
  b.emit_u16(Op::ldc, zero);
  size_t to_rec = b.emit_branch(Op::if_icmpne);
  b.emit_u16(Op::ldc, zero);
  b.emit(Op::vret);
  b.patch_branch(to_rec, b.here());
  b.emit_u16(Op::load, 0);
  b.emit_u16(Op::ldc, one);
  b.emit(Op::isub);
  b.emit_u16(Op::call, fn.index);
  b.emit_u16(Op::ldc, one);
  b.emit(Op::iadd);
  b.emit(Op::vret);
  fn.max_stack = 3;
}

// var stop: int = 0;   (global 0)
// fn busy(n: int): int { var r = 0; while (stop == 0) { r = sum_to(n); } return r; }
// Runs until a test sets global 0; polls at its loop, in sum_to's loop and returns.
inline void add_busy(vm::Module& m, uint16_t sum_to_index) {
  using vm::Op;
  vm::Function& fn = add_function(m, "busy", {vm::Type::Int}, vm::Type::Int, {vm::Type::Int});
  uint16_t zero = int_constant(fn, 0);
  vm::CodeBuilder b(fn.code);
  b.emit_u16(Op::ldc, zero);
  b.emit_u16(Op::store, 1);
  size_t to_check = b.emit_branch(Op::jump);
  size_t body = b.here();
  b.emit_u16(Op::load, 0);
  b.emit_u16(Op::call, sum_to_index);
  b.emit_u16(Op::store, 1);
  b.patch_branch(to_check, b.here());
  b.emit_u16(Op::gload, 0);
  b.emit_u16(Op::ldc, zero);
  size_t latch = b.here();
  b.emit_branch_to(Op::if_icmpeq, body);
  b.emit_u16(Op::load, 1);
  b.emit(Op::vret);
  fn.loops.push_back({uint32_t(body), uint32_t(latch), false});
  fn.max_stack = 2;
}

// fn count_sum(n: int): int { var s = 0; for i in 0..n { s += i; } return s; }
// A counted loop: compiled code has no poll in it (unless --counted-loop-polls).
inline void add_count_sum(vm::Module& m) {
  using vm::Op;
  vm::Function& fn = add_function(m, "count_sum", {vm::Type::Int}, vm::Type::Int,
                                  {vm::Type::Int, vm::Type::Int, vm::Type::Int});
  uint16_t zero = int_constant(fn, 0);
  vm::CodeBuilder b(fn.code);
  b.emit_u16(Op::ldc, zero);
  b.emit_u16(Op::store, 1);  // s
  b.emit_u16(Op::ldc, zero);
  b.emit_u16(Op::store, 2);  // i
  b.emit_u16(Op::load, 0);
  b.emit_u16(Op::store, 3);  // limit
  b.emit_u16(Op::load, 2);
  b.emit_u16(Op::load, 3);
  size_t to_exit = b.emit_branch(Op::if_icmpge);
  size_t body = b.here();
  b.emit_u16(Op::load, 1);
  b.emit_u16(Op::load, 2);
  b.emit(Op::iadd);
  b.emit_u16(Op::store, 1);
  size_t latch = b.here();
  b.emit_forloop(2, 3, body);
  b.patch_branch(to_exit, b.here());
  b.emit_u16(Op::load, 1);
  b.emit(Op::vret);
  fn.loops.push_back({uint32_t(body), uint32_t(latch), true});
  fn.max_stack = 2;
}

// @inline fn sum_to_inl(n: int): int { ...sum_to's body... }   (a while loop: polls)
// fn outer(n: int): int { return sum_to_inl(n) + 1; }
// Compiled, outer has sum_to_inl inlined, so a poll in the loop is in an inlined frame.
inline void add_outer(vm::Module& m) {
  using vm::Op;
  add_sum_to(m);
  vm::Function& inl = *m.functions.back();
  inl.name = "sum_to_inl";
  inl.inline_hint = vm::InlineHint::Inline;
  vm::Function& fn = add_function(m, "outer", {vm::Type::Int}, vm::Type::Int, {});
  uint16_t one = int_constant(fn, 1);
  vm::CodeBuilder b(fn.code);
  b.emit_u16(Op::load, 0);
  b.emit_u16(Op::call, inl.index);
  b.emit_u16(Op::ldc, one);
  b.emit(Op::iadd);
  b.emit(Op::vret);
  fn.max_stack = 2;
}

// fn ping(n: int): int { if (n == 0) { return 0; } return pong(n - 1) + 1; }
// fn pong(n: int): int { if (n == 0) { return 0; } return ping(n - 1) + 1; }
// Mutual recursion (@noinline): compile one and interpret the other for alternating frames
// (tests/unit/test_unwind.cpp finds them by name).
inline void add_ping_pong(vm::Module& m) {
  using vm::Op;
  uint16_t ping_index = uint16_t(m.functions.size());
  for (int k = 0; k < 2; k++) {
    vm::Function& fn = add_function(m, k == 0 ? "ping" : "pong", {vm::Type::Int}, vm::Type::Int, {});
    fn.inline_hint = vm::InlineHint::NoInline;  // one physical frame per call
    uint16_t zero = int_constant(fn, 0), one = int_constant(fn, 1);
    vm::CodeBuilder b(fn.code);
    b.emit_u16(Op::load, 0);
    b.emit_u16(Op::ldc, zero);
    size_t to_rec = b.emit_branch(Op::if_icmpne);
    b.emit_u16(Op::ldc, zero);
    b.emit(Op::vret);
    b.patch_branch(to_rec, b.here());
    b.emit_u16(Op::load, 0);
    b.emit_u16(Op::ldc, one);
    b.emit(Op::isub);
    b.emit_u16(Op::call, uint16_t(k == 0 ? ping_index + 1 : ping_index));
    b.emit_u16(Op::ldc, one);
    b.emit(Op::iadd);
    b.emit(Op::vret);
    fn.max_stack = 3;
  }
}

// var spins: int = 0; var native_spins: int = 0;   (globals 1 and 2)
// fn spin() { while (stop == 0) { spins = spins + 1; } }
// fn native_spin() { while (stop == 0) { native_spin_ns(50000); native_spins = native_spins + 1; } }
// fn join_one(h: int) { join(h); }
// Threads that make visible progress in Java, in native code, and blocked in a join.
inline void add_spinners(vm::Module& m) {
  using vm::Op;
  m.globals.push_back({"spins", vm::Type::Int, 0});
  m.globals.push_back({"native_spins", vm::Type::Int, 0});
  for (bool native : {false, true}) {
    vm::Function& fn = add_function(m, native ? "native_spin" : "spin", {}, vm::Type::Void, {});
    uint16_t zero = int_constant(fn, 0), one = int_constant(fn, 1), ns = int_constant(fn, 50000);
    uint16_t counter = native ? 2 : 1;
    vm::CodeBuilder b(fn.code);
    size_t to_check = b.emit_branch(Op::jump);
    size_t body = b.here();
    if (native) {
      b.emit_u16(Op::ldc, ns);
      b.emit_u16(Op::native, uint16_t(vm::NativeId::native_spin_ns));
    }
    b.emit_u16(Op::gload, counter);
    b.emit_u16(Op::ldc, one);
    b.emit(Op::iadd);
    b.emit_u16(Op::gstore, counter);
    b.patch_branch(to_check, b.here());
    b.emit_u16(Op::gload, 0);
    b.emit_u16(Op::ldc, zero);
    size_t latch = b.here();
    b.emit_branch_to(Op::if_icmpeq, body);
    b.emit(Op::ret);
    fn.loops.push_back({uint32_t(body), uint32_t(latch), false});
    fn.max_stack = 2;
  }
  vm::Function& fn = add_function(m, "join_one", {vm::Type::Int}, vm::Type::Void, {});
  vm::CodeBuilder b(fn.code);
  b.emit_u16(Op::load, 0);
  b.emit_u16(Op::native, uint16_t(vm::NativeId::join));
  b.emit(Op::ret);
  fn.max_stack = 1;
}

// A module with every fixture above; functions by index: 0 sum_to,
// 1 fib, 2 depth, 3 busy, 4 count_sum; `main` is sum_to, which no test runs as a program.
inline std::unique_ptr<vm::Module> make_module() {
  auto m = std::make_unique<vm::Module>();
  m->files = {"fixtures.mini"};
  add_sum_to(*m);
  add_fib(*m);
  add_depth(*m);
  m->globals.push_back({"stop", vm::Type::Int, 0});
  add_busy(*m, 0);
  add_count_sum(*m);
  add_outer(*m);  // 5 sum_to_inl, 6 outer
  add_ping_pong(*m);  // ping, pong (by name)
  add_spinners(*m);   // spin, native_spin, join_one (by name)
  m->main_index = 0;
  return m;
}

}  // namespace fixtures
