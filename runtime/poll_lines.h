// Where a method's safepoint polls are, by source line and kind: what `minivm compare`
// and its page mark beside the source, so that a student sees which line a biased
// sampler can land on. The interpreter polls at every loop's backward branch and every
// return (DESIGN.md, "Execution"); compiled code where its poll sites are, read from the
// code's own poll list and debug info, so the answer is the code that ran.
#pragma once
#include <cstdint>
#include <functional>
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
// code, inlined callees included); sorted by function, line, kind, each once. A return
// poll is listed at the return. A loop is listed once, at its own line, its latch's (the
// `for` line, a `while`'s condition), with the poll it has: interpreted its backward
// branch; compiled its header's (on every iteration) if it polls there, else its
// strip-mined latch's, else, counted, counted_no_poll. (A safepoint sample at a loop
// header poll still names the header's own line, the body's first.)
std::vector<PollLine> poll_lines(const Method& m, const CompiledCode* code);

// Which of `methods` (by index) enter their own code in a run that starts at `main`: a
// method runs when code that runs calls it without inlining it, or starts a thread or
// makes a closure of it. `code_of` gives the compiled code a method runs (nullptr: it
// runs interpreted, and every call of its bytecode is made); the calls compiled code makes
// are its call sites, so a callee it inlined everywhere never runs, nor do its polls.
// Virtual and interface calls and calls of function values are not resolved: every
// method of a class counts as run, and so does every lambda a running method makes.
std::vector<bool> methods_that_run(const std::vector<const Method*>& methods, size_t main,
                                   const std::function<const CompiledCode*(const Method&)>& code_of);

// What a compiled poll at `bci` of `f` is for: a return's, a loop header's, or a counted
// loop's latch (strip mining); the JIT places polls nowhere else. The one rule, used here
// and by `minivm disasm --jit` (jit/poll_sites.h).
PollKind compiled_poll_kind(const vm::Function& f, uint32_t bci);

}  // namespace runtime
