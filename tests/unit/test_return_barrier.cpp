// The stack watermark's return barrier (runtime/return_barrier.h) on hand-built stacks: a
// marked return slot reads as the real return pc for every walker, a walk asked to stop
// there stops after the marked frame, and a thread interrupted inside the barrier is
// sampled at its real return pc.
#include <catch2/catch.hpp>

#include "runtime/return_barrier.h"
#include "tests/unit/sampled_stack.h"

using namespace fixtures;

namespace {

std::string walk_all(Scene& s, uintptr_t pc, uintptr_t fp, bool stop_at_mark, runtime::WalkStop* stop = nullptr,
                     uintptr_t** slot = nullptr) {
  runtime::StackWalker w(&s.stack.thread, runtime::FramePos{fp - 64, fp, pc});
  if (stop_at_mark) w.stop_at_return_barrier();
  runtime::Frame f;
  std::vector<sampler::CompactFrame> out;
  while (w.next(f)) out.push_back(sampler::compact_frame(f));
  if (stop != nullptr) *stop = w.stop();
  if (slot != nullptr) *slot = w.marked_slot();
  return describe(out);
}

}  // namespace

TEST_CASE("return barrier: a marked slot reads as its real return pc, and a walk can stop at it") {
  ensure_generated_code();
  Scene s;
  // sum_to (interpreted, top) called from busy (interpreted, bottom).
  s.stack.interp_frame(s.top_fp, s.busy_fp, s.interp_return_pc, kSumTo, 12);
  uintptr_t pc = template_pc("iadd");
  std::string before = walk_all(s, pc, s.top_fp, false);
  REQUIRE(before == at("sum_to", 12, "interp") + ", " + at("busy", s.busy_call_bci, "interp"));

  auto* slot = reinterpret_cast<uintptr_t*>(s.top_fp + runtime::kFrameReturnPcOffset);
  runtime::ThreadCore& core = s.stack.thread.core;
  runtime::mark_return_slot(&s.stack.thread, slot, 1);
  CHECK(*slot == runtime::return_barrier_entry());
  CHECK(core.barrier_target == s.interp_return_pc);
  CHECK(core.barrier_depth == 1);
  CHECK(runtime::real_return_pc(core, *slot) == s.interp_return_pc);

  // Every walker sees through the mark.
  CHECK(walk_all(s, pc, s.top_fp, false) == before);
  VectorSink g, e;
  sampler::Registers regs = s.regs(pc, s.top_fp - 40, s.top_fp);
  regs.r13 = reinterpret_cast<uintptr_t>(method(kSumTo)->code + 12);
  regs.barrier_target = core.barrier_target;
  CHECK(sampler::walk_guess(&s.stack.thread, regs, g).failure == std::nullopt);
  CHECK(sampler::walk_exact(&s.stack.thread, regs, e).failure == std::nullopt);
  CHECK(describe(g.frames) == before);
  CHECK(describe(e.frames) == before);

  // Asked to, the walk stops after the marked frame and names its slot.
  runtime::WalkStop stop{};
  uintptr_t* marked = nullptr;
  CHECK(walk_all(s, pc, s.top_fp, true, &stop, &marked) == at("sum_to", 12, "interp"));
  CHECK(stop == runtime::WalkStop::return_barrier);
  CHECK(marked == slot);

  runtime::unmark_return_slot(&s.stack.thread, slot);
  CHECK(*slot == s.interp_return_pc);
  CHECK(core.barrier_depth == 0);
  CHECK(walk_all(s, pc, s.top_fp, true, &stop) == before);
  CHECK(stop == runtime::WalkStop::entry);
}

TEST_CASE("return barrier: inside the barrier the thread is on its way to its real return pc") {
  ensure_generated_code();
  Scene s;
  runtime::ThreadCore& core = s.stack.thread.core;
  const runtime::CodeBlob* barrier = runtime::find_blob(runtime::return_barrier_entry());
  REQUIRE(barrier != nullptr);
  CHECK(barrier->kind == runtime::BlobKind::return_barrier);
  core.barrier_target = 0x1111;
  // At the entry the target is still only in the thread; from the next instruction on, r10
  // holds it while the thread's copy may already name the next marked frame's.
  CHECK(runtime::target_in_barrier(core, runtime::return_barrier_entry(), 0x2222) == 0x1111);
  // Its last instruction, `jmp r10` (41 ff e2), after every store.
  uintptr_t jmp = barrier->end - 3;
  const auto* code = reinterpret_cast<const uint8_t*>(jmp);
  REQUIRE((code[0] == 0x41 && code[1] == 0xff && code[2] == 0xe2));
  CHECK(runtime::target_in_barrier(core, jmp, 0x2222) == 0x2222);
}
