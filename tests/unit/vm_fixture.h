// One VM per test process, loaded with the hand-built fixtures and the interpreter.
#pragma once
#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "interp/template_interpreter.h"
#include "runtime/vm.h"
#include "tests/unit/bytecode_fixtures.h"

namespace fixtures {

enum FixtureFunction : size_t { kSumTo = 0, kFib = 1, kDepth = 2, kBusy = 3, kCountSum = 4, kSumToInl = 5, kOuter = 6 };

inline runtime::VM& fixture_vm() {
  static runtime::VM* vm = [] {
    runtime::VM& v = runtime::VM::get();
    v.init(runtime::VMOptions{size_t(256) << 20, size_t(16) << 20});
    v.load(make_module());
    v.set_engine(interp::TemplateInterpreter::get().engine());
    return &v;
  }();
  return *vm;
}

inline int64_t run1(size_t fn, int64_t arg) { return fixture_vm().run(fixture_vm().method(fn), &arg); }

inline runtime::Method* method_named(const std::string& name) {
  runtime::VM& vm = fixture_vm();
  for (size_t i = 0; i < vm.module().functions.size(); i++)
    if (vm.module().functions[i]->name == name) return vm.method(i);
  FAIL("no fixture function " << name);
  return nullptr;
}

// The fixtures' globals, read and written while Mini threads use them.
inline int64_t global(int i) { return __atomic_load_n(&fixture_vm().globals()[i], __ATOMIC_SEQ_CST); }
inline void set_global(int i, int64_t v) { __atomic_store_n(&fixture_vm().globals()[i], v, __ATOMIC_SEQ_CST); }

// Waits up to 20 s for `cond`, then requires it.
inline void wait_until(const std::function<bool()>& cond) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!cond() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::microseconds(200));
  REQUIRE(cond());
}

}  // namespace fixtures
