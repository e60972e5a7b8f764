// Strip mining of counted loops (HotSpot's LoopStripMiningIter, done the way C2 does it).
// What it emits and why, with crunch's listing, is described once in docs/architecture.md,
// "Strip mining". Here: each loop's frame slot, the end of its current strip
// (plan_strip_loops); the charge at the loop's entry, made where its limit local is
// stored (after_local_write); the latch's slow path (strip_latch); and the strips ended
// early, their end set to INT64_MIN so the next latch takes the slow path
// (end_enclosing_strips after a stub call, reset_strips at frame, inline and OSR entry).
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
// first latch starts one. The common case (a short loop) is one store of the end and one
// subtraction from the countdown, whose borrow says it did not cover the iterations: the
// rare case undoes it. A loop with no iteration to go needs no test of its own: limit - i
// is 0 (nothing charged) or negative, a borrow as an unsigned number (the countdown is
// at most 2^30), so its strip is ended, and its header leaves at once.
void Compiler::after_local_write(int i) {
  MVM_ASSERT(written_[size_t(unified(*sc_, i))],
             "a local the code writes was counted as written (spill_locals stores only those)");
  // A bounds check made on the old value no longer holds (emit_ops.cpp, local_element_store).
  if (int u = unified(*sc_, i); u == checked_element_.first || u == checked_element_.second) checked_element_ = {-1, -1};
  for (const auto& l : sc_->strip_loops) {
    if (l.limit != i) continue;
    Operand var = local(l.var), limit = local(l.limit);
    Mem end = inline_slot(l.slot), countdown = strip_countdown();
    Label done = a.newLabel();
    load(rax, limit);
    a.mov(end, rax);
    a.emit(Inst::kIdSub, rax, var);  // limit - i
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
