// Where a method's safepoint polls are, by source line and kind: what `minivm compare`
// and its page mark beside the source, so that a student sees which line a biased
// sampler can land on. The interpreter polls at every loop's backward branch and every
// return (DESIGN.md, "Execution"); compiled code where its poll sites are, read from the
// code's own poll list and debug info, so the answer is the code that ran.
#pragma once
#include <cstdint>
#include <vector>

#include "base/poll_kind.h"
#include "runtime/compiled_code.h"
#include "runtime/method.h"

namespace runtime {

// The kinds of poll (base/poll_kinds.def): this file decides which one a poll site is.
using base::PollKind;
using base::poll_kind_label;
using base::poll_kind_mark;
using base::poll_kind_meaning;
using base::poll_kind_name;
using base::kPollKindCount;

struct PollLine {
  const vm::Function* function;  // the method whose source line it is (an inlined callee for its loops)
  uint32_t line;
  uint32_t bci;
  PollKind kind;
  bool operator==(const PollLine&) const = default;
};

// The polls of `m` as it runs: interpreted (code == nullptr) or as `code` (its compiled
// code, inlined callees included); sorted by function, line, kind, each once. A counted
// loop whose compiled code has no poll at its header is listed as counted_no_poll at
// its latch's line, the `for` statement's (with a strip-mined latch poll beside it when
// strip mining is on).
std::vector<PollLine> poll_lines(const Method& m, const CompiledCode* code);

// What a compiled poll at `bci` of `f` is for: a return's, a loop header's, or a counted
// loop's latch (strip mining); the JIT places polls nowhere else. The one rule, used here
// and by `minivm disasm --jit` (jit/poll_sites.h).
PollKind compiled_poll_kind(const vm::Function& f, uint32_t bci);

}  // namespace runtime
