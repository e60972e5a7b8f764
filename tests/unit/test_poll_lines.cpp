// runtime::poll_lines on the fixture's hand-built bytecode: the interpreter's polls
// (every loop's backward branch, every return) and compiled code's (a while loop's
// header, a counted loop's strip-mined latch or its header with --counted-loop-polls, a
// return), and a compiled counted loop without a header poll marked as such.
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
  CHECK(has(w, sum_to, sum_to.loops[0].header_bci, PollKind::loop_header));
  CHECK(has(w, sum_to, uint32_t(sum_to.code.size() - 1), PollKind::method_return));
  CHECK(count(w, PollKind::counted_no_poll) == 0);

  std::vector<PollLine> c = poll_lines(*vm.method(kCountSum), jit::compile_method(vm.method(kCountSum), {}));
  CHECK(has(c, count_sum, count_sum.loops[0].latch_bci, PollKind::strip_mined_latch));
  CHECK(has(c, count_sum, count_sum.loops[0].latch_bci, PollKind::counted_no_poll));
  CHECK(count(c, PollKind::loop_header) == 0);

  jit::JitOptions header_polls;
  header_polls.counted_loop_polls = true;
  std::vector<PollLine> cp =
      poll_lines(*vm.method(kCountSum), jit::compile_method(vm.method(kCountSum), header_polls));
  CHECK(has(cp, count_sum, count_sum.loops[0].header_bci, PollKind::loop_header));
  CHECK(count(cp, PollKind::counted_no_poll) == 0);
  CHECK(count(cp, PollKind::strip_mined_latch) == 0);

  jit::JitOptions no_strip;
  no_strip.strip_mining_iters = 0;
  std::vector<PollLine> cn = poll_lines(*vm.method(kCountSum), jit::compile_method(vm.method(kCountSum), no_strip));
  CHECK(count(cn, PollKind::strip_mined_latch) == 0);
  CHECK(has(cn, count_sum, count_sum.loops[0].latch_bci, PollKind::counted_no_poll));
}
