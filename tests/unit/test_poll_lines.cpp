// runtime::poll_lines on the fixture's hand-built bytecode: the interpreter's polls
// (every loop's backward branch, every return) and compiled code's (a while loop's
// header, a counted loop's strip-mined latch or its header with --counted-loop-polls, a
// return), one mark per loop on the loop's own line (its latch's), a compiled counted
// loop without any poll marked as such; and runtime::methods_that_run, whose own code a
// run enters.
#include <algorithm>
#include <catch2/catch.hpp>

#include "jit/baseline_compiler.h"
#include "runtime/poll_lines.h"
#include "tests/unit/vm_fixture.h"

using namespace fixtures;
using namespace runtime;

namespace {

bool has(const std::vector<PollLine>& polls, const vm::Function& f, uint32_t bci, PollKind kind) {
  return std::any_of(polls.begin(), polls.end(), [&](const PollLine& p) {
    return p.function == &f && p.kind == kind && p.line == f.line_at(bci) && p.bci == bci;
  });
}

size_t count(const std::vector<PollLine>& polls, PollKind kind) {
  return size_t(std::count_if(polls.begin(), polls.end(), [&](const PollLine& p) { return p.kind == kind; }));
}

}  // namespace

TEST_CASE("poll lines: interpreted code polls at every backward branch and return", "[poll_lines]") {
  VM& vm = fixture_vm();
  const vm::Function& f = *vm.module().functions[kCountSum];
  std::vector<PollLine> polls = poll_lines(*vm.method(kCountSum), nullptr);
  CHECK(has(polls, f, f.loops[0].latch_bci, PollKind::backward_branch));
  CHECK(has(polls, f, uint32_t(f.code.size() - 1), PollKind::method_return));
  CHECK(count(polls, PollKind::counted_no_poll) == 0);
  CHECK(count(polls, PollKind::loop_header) == 0);
}

TEST_CASE("poll lines: compiled code polls where its poll sites are", "[poll_lines]") {
  VM& vm = fixture_vm();
  const vm::Function& sum_to = *vm.module().functions[kSumTo];
  const vm::Function& count_sum = *vm.module().functions[kCountSum];
  std::vector<PollLine> w = poll_lines(*vm.method(kSumTo), jit::compile_method(vm.method(kSumTo), {}));
  // The while loop polls at its header, its first body line; the mark is the loop's, on
  // the line of its condition and backward branch.
  REQUIRE(sum_to.line_at(sum_to.loops[0].header_bci) != sum_to.line_at(sum_to.loops[0].latch_bci));
  CHECK(has(w, sum_to, sum_to.loops[0].latch_bci, PollKind::loop_header));
  CHECK(count(w, PollKind::loop_header) == 1);
  CHECK(has(w, sum_to, uint32_t(sum_to.code.size() - 1), PollKind::method_return));
  CHECK(count(w, PollKind::counted_no_poll) == 0);

  std::vector<PollLine> c = poll_lines(*vm.method(kCountSum), jit::compile_method(vm.method(kCountSum), {}));
  // One mark per loop: its strip-mined latch poll, not also "no poll in its body".
  CHECK(has(c, count_sum, count_sum.loops[0].latch_bci, PollKind::strip_mined_latch));
  CHECK(count(c, PollKind::counted_no_poll) == 0);
  CHECK(count(c, PollKind::loop_header) == 0);

  jit::JitOptions header_polls;
  header_polls.counted_loop_polls = true;
  std::vector<PollLine> cp =
      poll_lines(*vm.method(kCountSum), jit::compile_method(vm.method(kCountSum), header_polls));
  CHECK(has(cp, count_sum, count_sum.loops[0].latch_bci, PollKind::loop_header));
  CHECK(count(cp, PollKind::counted_no_poll) == 0);
  CHECK(count(cp, PollKind::strip_mined_latch) == 0);

  jit::JitOptions no_strip;
  no_strip.strip_mining_iters = 0;
  std::vector<PollLine> cn = poll_lines(*vm.method(kCountSum), jit::compile_method(vm.method(kCountSum), no_strip));
  CHECK(count(cn, PollKind::strip_mined_latch) == 0);
  CHECK(has(cn, count_sum, count_sum.loops[0].latch_bci, PollKind::counted_no_poll));
}

TEST_CASE("poll lines: an inlined callee's loop is marked in its caller's code, on the callee's line", "[poll_lines]") {
  VM& vm = fixture_vm();
  const vm::Function& inl = *vm.module().functions[kSumToInl];
  std::vector<PollLine> o = poll_lines(*vm.method(kOuter), jit::compile_method(vm.method(kOuter), {}));
  CHECK(has(o, inl, inl.loops[0].latch_bci, PollKind::loop_header));
  CHECK(count(o, PollKind::loop_header) == 1);
}

TEST_CASE("methods that run: a callee inlined at its every call never runs its own code", "[poll_lines]") {
  VM& vm = fixture_vm();
  std::vector<const Method*> methods;
  for (size_t i = 0; i < vm.method_count(); i++) methods.push_back(vm.method(i));
  // outer's compiled code holds sum_to_inl inlined: outer runs, sum_to_inl never enters
  // its own code. busy calls sum_to, which it does not inline.
  const CompiledCode* outer = jit::compile_method(vm.method(kOuter), {});
  const CompiledCode* busy = jit::compile_method(vm.method(kBusy), {});
  auto compiled = [&](const Method& m) -> const CompiledCode* {
    return &m == vm.method(kOuter) ? outer : &m == vm.method(kBusy) ? busy : nullptr;
  };
  std::vector<bool> from_outer = methods_that_run(methods, kOuter, compiled);
  CHECK(from_outer[kOuter]);
  CHECK_FALSE(from_outer[kSumToInl]);
  CHECK_FALSE(from_outer[kSumTo]);
  std::vector<bool> from_busy = methods_that_run(methods, kBusy, compiled);
  CHECK(from_busy[kBusy]);
  CHECK(from_busy[kSumTo]);
  CHECK_FALSE(from_busy[kOuter]);
  // Interpreted (no compiled code), outer calls sum_to_inl: it runs.
  std::vector<bool> interpreted = methods_that_run(methods, kOuter, [](const Method&) -> const CompiledCode* {
    return nullptr;
  });
  CHECK(interpreted[kSumToInl]);
}
