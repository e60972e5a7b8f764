// Strip mining of counted loops (HotSpot's LoopStripMiningIter, done the way C2 does it):
// a counted loop has no poll at its header, so that its iterations cost what they would
// without polls, yet a long one must still reach a poll within a bound.
//
// Each strip-mined loop has two frame slots: the end of its current strip and the loop
// variable's value where the strip began. The latch compares the incremented variable
// with the strip's end instead of the loop's limit (the end is never beyond the limit),
// so an iteration costs exactly what it costs with no polls at all. When a strip ends,
// the latch's slow path charges the strip's iterations to the thread's countdown (shared
// by all counted loops, so a nest of short loops counts too), then leaves the loop at its
// limit (without a poll: an exhausted countdown carries over to the next latch, and a
// short inner loop's next run takes the slow path at its first latch), or polls if the
// countdown ran out and starts the next strip:
//     end = i + min(limit - i, countdown).
// A strip is ended early (its end set to INT64_MIN, so the next latch takes the slow
// path) when the loop's limit local is written (each entry into the loop stores it), at
// frame, inline and OSR entry, and after a stub call charged its elements to the
// countdown, so a counted loop around a long arraycopy still polls within the bound.
//
// Correctness does not depend on the strip state being up to date: the end is only ever
// INT64_MIN or min(limit, ...), and a write to the limit resets it, so the latch never
// lets the variable pass the limit.
#include <cstdint>
#include <limits>

#include "jit/compiler.h"
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
    inline_slots_ += 2;
  }
}

const InlineScope::StripLoop* Compiler::strip_loop_at_latch(size_t bci) const {
  for (const auto& l : sc_->strip_loops)
    if (l.latch == bci) return &l;
  return nullptr;
}

// The variable was incremented; `i < end` has just failed.
void Compiler::strip_latch(const Insn& i, const InlineScope::StripLoop& loop) {
  Operand var = local(loop.var), limit = local(loop.limit);
  Mem end = inline_slot(loop.slot), start = inline_slot(loop.slot + 1);
  Mem countdown = qword_ptr(r15, runtime::kThreadStripCountdownOffset);
  // Charge the strip's iterations (at least one: a loop variable written in the body
  // by hand-made bytecode must not credit the countdown).
  Label counted = a.newLabel(), no_poll = a.newLabel(), next = a.newLabel(), leave = a.newLabel();
  load(rax, var);
  a.sub(rax, start);
  a.cmp(rax, 1);
  a.jge(counted);
  a.mov(eax, 1);
  a.bind(counted);
  a.sub(countdown, rax);
  // Leaving the loop: no poll here, an exhausted countdown carries over to the next
  // latch (or the return poll comes first), as a loop's last iteration never polled.
  cmp(var, limit);
  a.jge(leave);
  a.cmp(countdown, 0);
  a.jg(no_poll);
  a.mov(countdown, imm(int32_t(options_.strip_mining_iters)));
  poll(int32_t(i.bci));
  a.bind(no_poll);
  // The next strip: end = i + min(limit - i, countdown). limit - i is exact as an
  // unsigned number (i < limit), and the countdown is positive here.
  load(rax, limit);
  load(rcx, var);
  a.sub(rax, rcx);
  a.cmp(rax, countdown);
  a.jbe(next);
  a.mov(rax, countdown);
  a.bind(next);
  a.add(rax, rcx);
  a.mov(end, rax);
  a.mov(start, rcx);
  a.jmp(target(i));
  a.bind(leave);
}

void Compiler::after_local_write(int i) {
  for (const auto& l : sc_->strip_loops) {
    if (l.limit != i) continue;
    move(inline_slot(l.slot + 1), local(l.var));
    a.mov(rax, imm(kStripEnded));
    a.mov(inline_slot(l.slot), rax);
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
  for (const auto& l : s.strip_loops) {
    a.mov(inline_slot(l.slot), rax);
    a.mov(inline_slot(l.slot + 1), 0);
  }
}

void Compiler::reset_strips_for_osr() {
  const InlineScope& root = scopes_.front();
  for (const auto& l : root.strip_loops) {
    a.mov(rax, home_local(l.var));
    a.mov(inline_slot(l.slot + 1), rax);
  }
  if (root.strip_loops.empty()) return;
  a.mov(rax, imm(kStripEnded));
  for (const auto& l : root.strip_loops) a.mov(inline_slot(l.slot), rax);
}

}  // namespace jit::baseline
