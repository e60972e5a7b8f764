// One VM per test process, loaded with the hand-built fixtures and the interpreter.
#pragma once
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

}  // namespace fixtures
