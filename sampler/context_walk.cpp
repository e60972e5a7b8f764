#include "sampler/context_walk.h"

#include <cstring>
#include <optional>

#include "runtime/code_blob.h"
#include "runtime/code_unloading.h"
#include "runtime/compiled_code.h"
#include "runtime/frame.h"
#include "runtime/method.h"
#include "runtime/return_barrier.h"
#include "runtime/signals.h"
#include "runtime/stack_walker.h"
#include "runtime/thread.h"
#include "runtime/vm.h"

namespace sampler {

namespace {

// A walk of the callers that stopped before the entry stub is a failure.
std::optional<Reason> stop_failure(runtime::WalkStop stop) {
  switch (stop) {
    case runtime::WalkStop::entry: return std::nullopt;
    case runtime::WalkStop::unknown_pc: return Reason::bad_sender_pc;
    case runtime::WalkStop::bad_fp: return Reason::bad_sender_fp;
    case runtime::WalkStop::no_anchor:
    case runtime::WalkStop::frame_kind_not_walkable:
    case runtime::WalkStop::return_barrier: break;
  }
  return Reason::sender_not_walkable;
}

// The rest of the stack from a caller's position (a return address and its frame's fp),
// through the runtime's walker. `checked` adds the safe-for-sender checks of a guessing
// walk; frames up to `limit` are put.
WalkResult walk_callers(runtime::Thread* t, runtime::FramePos pos, bool exact_pc, bool checked, FrameSink& sink,
                        WalkResult r, uint32_t limit) {
  runtime::StackWalker w(t, pos, exact_pc);
  runtime::Frame f;
  uintptr_t last_fp = 0;
  while (w.next(f)) {
    if (checked) {
      // Inlined scopes share their frame's fp; physical frames must move up the stack.
      if (f.pos.fp != last_fp) {
        if (f.pos.fp < last_fp) return WalkResult{Reason::bad_sender_fp, r.depth, false};
        last_fp = f.pos.fp;
      }
      if (!runtime::VM::get().is_method(f.method)) return WalkResult{Reason::bad_method, r.depth, false};
    }
    if (r.depth == limit) {
      r.truncated = true;
      return r;
    }
    if (!sink.put(compact_frame(f))) return WalkResult{Reason::arena_full, r.depth, false};
    r.depth++;
  }
  r.failure = stop_failure(w.stop());
  if (w.stop() == runtime::WalkStop::unknown_pc) r.freed_code = runtime::pc_in_freed_code(w.stop_pc());
  return r;
}

// A top pc in no blob: unknown, and whether it lies in freed code.
WalkResult unknown_top_pc(uintptr_t pc) {
  WalkResult r{Reason::unknown_pc};
  r.freed_code = runtime::pc_in_freed_code(pc);
  return r;
}

// The interpreter stores its bcp in the frame only at calls and polls (interp/README.md),
// so between two of them the frame names an instruction that already ran. The pc says
// which bytecode's template is running: when that is not the saved bcp's bytecode, the
// frame's position lags. (A lag to an instruction of the same bytecode, such as a
// loop's latch from an alike latch, goes unseen.)
bool saved_bcp_lags(const runtime::CodeBlob& blob, const Registers& regs) {
  int running = blob.bytecode_at(regs.pc);
  if (running < 0) return false;  // the method entry: its bcp is the first instruction's
  auto* m = reinterpret_cast<const runtime::Method*>(stack_word(regs.fp + runtime::kInterpFrameMethodOffset));
  auto* bcp = reinterpret_cast<const uint8_t*>(stack_word(regs.fp + runtime::kInterpFrameBcpOffset));
  return m->holds(bcp) && *bcp != running;
}

}  // namespace

WalkResult walk_guess(runtime::Thread* t, const Registers& regs, FrameSink& sink, uint32_t depth_limit) {
  const runtime::CodeBlob* blob = runtime::find_blob(regs.pc);
  if (blob == nullptr) return unknown_top_pc(regs.pc);
  const runtime::PcRange* special = blob->special_at(regs.pc);
  switch (blob->kind) {
    case runtime::BlobKind::call_stub:
    case runtime::BlobKind::safepoint_blob:
    case runtime::BlobKind::return_barrier: return WalkResult{Reason::pc_in_runtime_stub};  // (registers_of moved the pc out of it)
    case runtime::BlobKind::stub: return WalkResult{Reason::pc_in_stub};  // frameless: no metadata to guess from
    case runtime::BlobKind::compiled:
    case runtime::BlobKind::interpreter:
      if (special == nullptr) break;
      return WalkResult{special->info().phase == runtime::PcRangeInfo::Phase::entry ? Reason::pc_in_prologue
                                                                                   : Reason::pc_in_epilogue};
  }
  // Safe for sender: the top frame's fp must look like a frame on this thread's stack.
  if (!t->on_stack(regs.fp) || (regs.fp & 7) != 0 || regs.fp < regs.sp) return WalkResult{Reason::bad_top_fp};
  WalkResult r = walk_callers(t, runtime::FramePos{regs.sp, regs.fp, regs.pc}, /*exact_pc=*/true, /*checked=*/true,
                              sink, WalkResult{}, depth_limit);
  // (The walk checked the top frame's Method*.)
  if (!r.failure && blob->kind == runtime::BlobKind::interpreter && saved_bcp_lags(*blob, regs))
    r.biased = Reason::stale_bcp;
  return r;
}

WalkResult walk_exact(runtime::Thread* t, const Registers& regs, FrameSink& sink, uint32_t depth_limit) {
  const runtime::CodeBlob* blob = runtime::find_blob(regs.pc);
  if (blob == nullptr) return unknown_top_pc(regs.pc);
  WalkResult r;
  uintptr_t caller_pc = 0, caller_fp = 0;
  // False when the frame does not fit: the arena is full, or the depth limit cuts the
  // stack here (r.truncated: the walk ends as a sample of the frames put).
  auto put = [&](const CompactFrame& f) {
    if (r.depth == depth_limit) {
      r.truncated = true;
      return false;
    }
    if (!sink.put(f)) return false;
    r.depth++;
    return true;
  };
  auto not_put = [&] { return r.truncated ? r : WalkResult{Reason::arena_full}; };
  switch (blob->kind) {
    case runtime::BlobKind::call_stub: return WalkResult{Reason::pc_in_call_stub};  // entering or leaving Mini code
    case runtime::BlobKind::return_barrier: return WalkResult{Reason::pc_in_runtime_stub};  // (registers_of moved the pc out of it)
    case runtime::BlobKind::stub: {
      const runtime::StubFrame* sf = blob->stub_frame_at(regs.pc);
      if (sf == nullptr) return WalkResult{Reason::no_frame_description};
      if (!put(CompactFrame{nullptr, blob->frame_name.c_str(), -1, runtime::FrameKind::stub})) return not_put();
      return walk_callers(t, step_out_of_stub(*sf, regs), false, false, sink, r, depth_limit);
    }
    case runtime::BlobKind::compiled:
    case runtime::BlobKind::interpreter:
    case runtime::BlobKind::safepoint_blob: break;
  }
  const runtime::FrameRow* row = blob->frame_row_at(regs.pc);
  if (row == nullptr) return WalkResult{Reason::no_frame_description};
  // The interrupted frame itself, at the exact pc.
  if (blob->kind == runtime::BlobKind::compiled) {
    runtime::ScopeChain scopes = static_cast<const runtime::CompiledCode*>(blob)->scopes_at(regs.pc);
    for (uint32_t k = 0; k < scopes.count; k++)
      if (!put(CompactFrame{scopes[k].method, nullptr, scopes[k].bci, scopes.kind(k)})) return not_put();
  } else if (blob->kind == runtime::BlobKind::interpreter) {
    const runtime::PcRange* special = blob->special_at(regs.pc);
    auto phase = special != nullptr ? std::optional(special->info().phase) : std::nullopt;
    const runtime::Method* m = nullptr;
    int32_t bci = 0;
    if (phase == runtime::PcRangeInfo::Phase::entry) {
      m = reinterpret_cast<const runtime::Method*>(regs.rbx);  // the callee, throughout method entry
    } else if (row->cfa == runtime::FrameRow::Cfa::rbp && phase != runtime::PcRangeInfo::Phase::exit) {
      InterpPosition at = interrupted_interp_position(regs);
      m = at.method;
      if (!m->holds(at.bcp)) return WalkResult{Reason::bad_bcp};
      bci = int32_t(at.bcp - m->code);
    } else {
      // Leaving the frame (or jumping to OSR code): r13 still holds the instruction.
      auto* bcp = reinterpret_cast<const uint8_t*>(regs.r13);
      m = runtime::VM::get().method_containing(bcp);
      if (m == nullptr) return WalkResult{Reason::bad_bcp};
      bci = int32_t(bcp - m->code);
    }
    if (!put(CompactFrame{m, nullptr, bci, runtime::FrameKind::interp})) return not_put();
  }
  // (In the safepoint blob the thread is at the poll: its caller, the polling frame, is
  // the top Mini frame, at the poll.)
  uintptr_t cfa = 0;
  if (!step_out(*row, regs, cfa, caller_pc, caller_fp)) return WalkResult{Reason::no_frame_description};
  if (r.truncated) return r;
  return walk_callers(t, runtime::FramePos{cfa, caller_fp, caller_pc}, false, false, sink, r, depth_limit);
}

runtime::FramePos step_out_of_stub(const runtime::StubFrame& sf, const Registers& regs) {
  uintptr_t ret_slot = regs.sp + uintptr_t(sf.ret_sp_offset);
  return runtime::FramePos{ret_slot + 8, regs.fp /* stubs never touch rbp */, stack_word(ret_slot)};
}

bool step_out(const runtime::FrameRow& row, const Registers& regs, uintptr_t& cfa, uintptr_t& ra, uintptr_t& caller_fp) {
  switch (row.cfa) {
    case runtime::FrameRow::Cfa::rsp: cfa = regs.sp; break;
    case runtime::FrameRow::Cfa::rbp: cfa = regs.fp; break;
    case runtime::FrameRow::Cfa::r14: cfa = regs.r14; break;
    case runtime::FrameRow::Cfa::r14_less_params:
      cfa = regs.r14 - 8 * uintptr_t(reinterpret_cast<const runtime::Method*>(regs.rbx)->param_count);
      break;
    // Neither is read from registers: the overflow path (the program ends there with a
    // Mini error) and the safepoint blob's first instruction (a sample never sees it: the
    // thread is in_vm from the trap on).
    case runtime::FrameRow::Cfa::anchor_sp: return false;
  }
  cfa += uintptr_t(int64_t(row.cfa_offset));
  switch (row.ra) {
    case runtime::FrameRow::Ra::at_cfa: ra = stack_word(cfa + uintptr_t(int64_t(row.ra_offset))); break;
    case runtime::FrameRow::Ra::at_rsp: ra = stack_word(regs.sp); break;
    case runtime::FrameRow::Ra::in_rax: ra = regs.rax; break;
    case runtime::FrameRow::Ra::in_rcx: ra = regs.rcx; break;
    case runtime::FrameRow::Ra::at_resume_pc: return false;
  }
  ra = runtime::real_return_pc(regs.barrier_target, ra);
  caller_fp = row.rbp == runtime::FrameRow::Rbp::saved    ? stack_word(cfa + uintptr_t(int64_t(row.rbp_offset)))
              : row.rbp == runtime::FrameRow::Rbp::in_rdx ? regs.rdx
                                                          : regs.fp;
  return true;
}

namespace {
struct ProtectedWalk {
  bool exact;
  runtime::Thread* t;
  const Registers* regs;
  FrameSink* sink;
  uint32_t depth_limit;
  WalkResult result;
};
void run_walk(void* arg) {
  auto* w = static_cast<ProtectedWalk*>(arg);
  w->result = w->exact ? walk_exact(w->t, *w->regs, *w->sink, w->depth_limit)
                       : walk_guess(w->t, *w->regs, *w->sink, w->depth_limit);
}
}  // namespace

WalkResult walk_protected(bool exact, runtime::Thread* t, const Registers& regs, FrameSink& sink,
                          uint32_t depth_limit) {
  ProtectedWalk w{exact, t, &regs, &sink, depth_limit, {}};
  if (!runtime::protected_call(&run_walk, &w)) return WalkResult{Reason::crashed_in_walk};
  return w.result;
}

}  // namespace sampler
