// Where a method's safepoint polls are, by source line and kind: what `minivm compare`
// and its page mark beside the source, so that a student sees which line a biased
// sampler can land on. The interpreter polls at every loop's backward branch and every
// return (DESIGN.md, "Execution"); compiled code where its poll sites are, read from the
// code's own poll list and debug info, so the answer is the code that ran.
#pragma once
#include <cstdint>
#include <vector>

#include "runtime/compiled_code.h"
#include "runtime/method.h"

namespace runtime {

// name, mark (one character for a column), label (for a listing), meaning (a legend)
#define POLL_KINDS(X)                                                                                       \
  X(backward_branch, "B", "backward branch", "interpreted loop: polls at its backward branch, every iteration") \
  X(loop_header, "H", "loop header", "compiled loop header poll, every iteration")                           \
  X(strip_mined_latch, "S", "strip-mined latch",                                                            \
    "compiled counted loop: polls at its latch once per strip of iterations")                               \
  X(method_return, "R", "return", "return poll, while the frame is still intact")                           \
  X(counted_no_poll, "-", "no poll", "compiled counted loop with no poll in its body")

enum class PollKind : uint8_t {
#define X(name, mark, label, meaning) name,
  POLL_KINDS(X)
#undef X
};
const char* poll_kind_name(PollKind k);
const char* poll_kind_mark(PollKind k);     // one character for a column
const char* poll_kind_label(PollKind k);    // words for a listing: "strip-mined latch"
const char* poll_kind_meaning(PollKind k);  // for a legend
inline constexpr size_t kPollKindCount = 0
#define X(name, mark, label, meaning) +1
    POLL_KINDS(X)
#undef X
    ;

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
