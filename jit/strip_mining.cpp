// Strip mining of counted loops (HotSpot's LoopStripMiningIter, done the way C2 does it):
// a counted loop has no poll at its header, so that its iterations cost what they would
// without polls, yet a long one must still reach a poll within a bound.
//
// Each strip-mined loop has one frame slot: the end of its current strip. The latch
// compares the incremented variable with the strip's end instead of the loop's limit
// (the end is never beyond the limit), so an iteration costs exactly what it costs with
// no polls at all. A strip's iterations are charged to the thread's countdown (shared by
// all counted loops, so a nest of short loops counts too) when the strip starts, not
// when it ends: a loop entered with fewer iterations to go than the countdown allows
// (nearly every short loop) charges them all at its entry and runs as one strip, whose
// end is the limit, and leaves at its last latch with one compare against the limit and
// no other work. A loop left early (break, return) has been charged for iterations it
// did not run: the next poll only comes sooner. When a strip ends before the limit, the
// countdown is exhausted (or the strip was ended early, below): the latch's slow path
// polls if it is, and starts the next strip:
//     len = min(limit - i, countdown); countdown -= len; end = i + len.
// A loop entered with more iterations than the countdown allows, or with none, starts
// with its strip ended, and its first latch starts the first strip.
// A strip is ended early (its end set to INT64_MIN, so the next latch takes the slow
// path) when the loop's limit local is written (each entry into the loop stores it, and
// that store is where the entry's charge is made), at frame, inline and OSR entry, and
// after a stub call charged its elements to the countdown, so a counted loop around a
// long arraycopy still polls within the bound. The countdown stays between 0 and the
// strip length: a strip takes at most what is left, and a stub's charge stops at 0.
//
// Correctness does not depend on the strip state being up to date: the end is only ever
// INT64_MIN or i + min(limit - i, ...), and a write to the limit recomputes it, so the
// latch never lets the variable pass the limit.
#include <cstdint>
#include <limits>

#include "jit/compiler.h"
#include "runtime/invariant.h"
#include "runtime/thread.h"

namespace jit::baseline {

namespace {
constexpr int64_t kStripEnded = std::numeric_limits<int64_t>::min();
}

void Compiler::plan_strip_loops(InlineScope& s) {
  if (options_.strip_mining_iters == 0 || !options_.emit_polls || options_.counted_loop_polls) return;
  const vm::Function& f = *s.fn;
  for (const vm::LoopEntry& l : f.loops) {
    if (!l.counted || l.latch_bci >= f.code.size() || Op(f.code[l.latch_bci]) != Op::forloop) continue;
    if (s.info.depth_at[l.latch_bci] < 0) continue;
    const uint8_t* p = f.code.data() + l.latch_bci;
    s.strip_loops.push_back({l.header_bci, l.latch_bci, vm::read_u16(p, vm::kOperandA),
                             vm::read_u16(p, vm::kOperandB), inline_slots_});
    inline_slots_ += 1;
  }
}

const InlineScope::StripLoop* Compiler::strip_loop_at_latch(size_t bci) const {
  for (const auto& l : sc_->strip_loops)
    if (l.latch == bci) return &l;
  return nullptr;
}

Mem Compiler::strip_countdown() const { return qword_ptr(r15, runtime::kThreadStripCountdownOffset); }

// The variable was incremented; `i < end` has just failed.
void Compiler::strip_latch(const Insn& i, const InlineScope::StripLoop& loop) {
  Operand var = local(loop.var), limit = local(loop.limit);
  Mem end = inline_slot(loop.slot), countdown = strip_countdown();
  Label no_poll = a.newLabel(), next = a.newLabel(), leave = a.newLabel();
  // At the limit: the strip's iterations were charged when it started.
  cmp(var, limit);
  a.jge(leave);
  a.cmp(countdown, 0);
  a.jg(no_poll);  // the strip was ended early, with iterations left to charge
  a.mov(countdown, imm(int32_t(options_.strip_mining_iters)));
  poll(int32_t(i.bci));
  a.bind(no_poll);
  // The next strip: len = min(limit - i, countdown), charged now. limit - i is exact as
  // an unsigned number (i < limit), and the countdown is positive here.
  load(rax, limit);
  load(rcx, var);
  a.sub(rax, rcx);
  a.cmp(rax, countdown);
  a.jbe(next);
  a.mov(rax, countdown);
  a.bind(next);
  a.sub(countdown, rax);
  a.add(rax, rcx);
  a.mov(end, rax);
  a.jmp(target(i));
  a.bind(leave);
}

// The loop's entry (its limit was just stored): if the countdown covers every iteration
// to go, charge them and make the limit the strip's end; else end the strip, and the
// first latch starts one. The common case (a short loop) is one store of the end, one
// compare and one subtraction from the countdown, whose borrow says it did not cover the
// iterations: the rare case undoes it.
void Compiler::after_local_write(int i) {
  MVM_ASSERT(sc_ != &scopes_.front() || written_[size_t(i)],
             "a root local the code writes was counted as written (spill_locals stores only those)");
  for (const auto& l : sc_->strip_loops) {
    if (l.limit != i) continue;
    Operand var = local(l.var), limit = local(l.limit);
    Mem end = inline_slot(l.slot), countdown = strip_countdown();
    Label done = a.newLabel();
    load(rax, limit);
    a.mov(end, rax);
    cmp(var, rax);
    a.jge(done);  // no iteration: nothing to charge, and the header leaves at once
    a.emit(Inst::kIdSub, rax, var);  // limit - i, exact as an unsigned number
    a.sub(countdown, rax);
    a.jae(done);  // no borrow: the countdown (never negative) covered them
    a.add(countdown, rax);
    a.mov(rax, imm(kStripEnded));
    a.mov(end, rax);
    a.bind(done);
  }
}

void Compiler::end_enclosing_strips(size_t bci) {
  bool loaded = false;
  size_t at = bci;
  for (const InlineScope* s = sc_; s != nullptr; at = s->call_bci, s = s->caller) {
    for (const auto& l : s->strip_loops) {
      if (at < l.header || at > l.latch) continue;
      if (!loaded) a.mov(rax, imm(kStripEnded));
      loaded = true;
      a.mov(inline_slot(l.slot), rax);
    }
  }
}

void Compiler::reset_strips(const InlineScope& s) {
  if (s.strip_loops.empty()) return;
  a.mov(rax, imm(kStripEnded));
  for (const auto& l : s.strip_loops) a.mov(inline_slot(l.slot), rax);
}

}  // namespace jit::baseline
