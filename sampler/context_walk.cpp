#include "sampler/context_walk.h"

#include <cstring>
#include <optional>

#include "runtime/code_blob.h"
#include "runtime/compiled_code.h"
#include "runtime/frame.h"
#include "runtime/method.h"
#include "runtime/signals.h"
#include "runtime/stack_walker.h"
#include "runtime/thread.h"
#include "runtime/vm.h"

namespace sampler {

namespace {

uintptr_t load(uintptr_t addr) { return *reinterpret_cast<const uintptr_t*>(addr); }

CompactFrame compact(const runtime::Frame& f) { return CompactFrame{f.method, nullptr, f.bci, f.kind}; }

const char* stop_reason_failure(const char* stop) {
  if (stop == nullptr) return nullptr;
  if (std::strcmp(stop, "unknown pc") == 0) return "bad_sender_pc";
  if (std::strcmp(stop, "bad fp") == 0) return "bad_sender_fp";
  return "sender_not_walkable";
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
        if (f.pos.fp < last_fp) return WalkResult{"bad_sender_fp", r.depth, false};
        last_fp = f.pos.fp;
      }
      if (!runtime::VM::get().is_method(f.method)) return WalkResult{"bad_method", r.depth, false};
    }
    if (r.depth == limit) {
      r.truncated = true;
      return r;
    }
    if (!sink.put(compact(f))) return WalkResult{"arena_full", r.depth, false};
    r.depth++;
  }
  r.failure = stop_reason_failure(w.stop_reason());
  return r;
}

}  // namespace

WalkResult walk_guess(runtime::Thread* t, const Registers& regs, FrameSink& sink, uint32_t depth_limit) {
  const runtime::CodeBlob* blob = runtime::find_blob(regs.pc);
  if (blob == nullptr) return WalkResult{"unknown_pc"};
  const runtime::PcRange* special = blob->special_at(regs.pc);
  switch (blob->kind) {
    case runtime::BlobKind::call_stub:
    case runtime::BlobKind::safepoint_blob: return WalkResult{"pc_in_runtime_stub"};
    case runtime::BlobKind::stub: return WalkResult{"pc_in_stub"};  // frameless: no metadata to guess from
    case runtime::BlobKind::compiled:
    case runtime::BlobKind::interpreter:
      if (special == nullptr) break;
      return WalkResult{special->info().phase == runtime::PcRangeInfo::Phase::entry ? "pc_in_prologue" : "pc_in_epilogue"};
  }
  // Safe for sender: the top frame's fp must look like a frame on this thread's stack.
  if (!t->on_stack(regs.fp) || (regs.fp & 7) != 0 || regs.fp < regs.sp) return WalkResult{"bad_top_fp"};
  return walk_callers(t, runtime::FramePos{regs.sp, regs.fp, regs.pc}, /*exact_pc=*/true, /*checked=*/true, sink,
                      WalkResult{}, depth_limit);
}

WalkResult walk_exact(runtime::Thread* t, const Registers& regs, FrameSink& sink) {
  const runtime::CodeBlob* blob = runtime::find_blob(regs.pc);
  if (blob == nullptr) return WalkResult{"unknown_pc"};
  WalkResult r;
  uintptr_t caller_sp = 0, caller_pc = 0, caller_fp = 0;
  auto put = [&](const CompactFrame& f) {
    if (!sink.put(f)) return false;
    r.depth++;
    return true;
  };
  switch (blob->kind) {
    case runtime::BlobKind::call_stub: return WalkResult{"pc_in_call_stub"};  // entering or leaving Mini code
    case runtime::BlobKind::stub: {
      const runtime::StubFrame* sf = blob->stub_frame_at(regs.pc);
      if (sf == nullptr) return WalkResult{"no_frame_description"};
      if (!put(CompactFrame{nullptr, blob->frame_name.c_str(), -1, runtime::FrameKind::stub}))
        return WalkResult{"arena_full"};
      uintptr_t slot = regs.sp + uintptr_t(sf->ret_sp_offset);
      caller_pc = load(slot);
      caller_sp = slot + 8;
      caller_fp = regs.fp;  // stubs never touch rbp
      return walk_callers(t, runtime::FramePos{caller_sp, caller_fp, caller_pc}, false, false, sink, r, UINT32_MAX);
    }
    case runtime::BlobKind::compiled:
    case runtime::BlobKind::interpreter:
    case runtime::BlobKind::safepoint_blob: break;
  }
  const runtime::FrameRow* row = blob->frame_row_at(regs.pc);
  if (row == nullptr) return WalkResult{"no_frame_description"};
  // The interrupted frame itself, at the exact pc.
  if (blob->kind == runtime::BlobKind::compiled) {
    auto* code = static_cast<const runtime::CompiledCode*>(blob);
    const runtime::PcDesc& d = code->desc_at(regs.pc);
    for (uint16_t k = 0; k < d.scope_count; k++) {
      const runtime::Scope& s = code->scopes[d.scope_begin + k];
      if (!put(CompactFrame{s.method, nullptr, s.bci, k + 1 == d.scope_count ? runtime::FrameKind::jit : runtime::FrameKind::inlined}))
        return WalkResult{"arena_full"};
    }
  } else if (blob->kind == runtime::BlobKind::interpreter) {
    const runtime::PcRange* special = blob->special_at(regs.pc);
    auto phase = special != nullptr ? std::optional(special->info().phase) : std::nullopt;
    const runtime::Method* m = nullptr;
    int32_t bci = 0;
    if (phase == runtime::PcRangeInfo::Phase::entry) {
      m = reinterpret_cast<const runtime::Method*>(regs.rbx);  // the callee, throughout method entry
    } else if (row->cfa == runtime::FrameRow::Cfa::rbp && phase != runtime::PcRangeInfo::Phase::exit) {
      m = reinterpret_cast<const runtime::Method*>(load(regs.fp + runtime::kInterpFrameMethodOffset));
      auto* bcp = reinterpret_cast<const uint8_t*>(regs.r13);  // live: exact
      // Right after a call returns, r13 (clobbered by the callee) is not yet reloaded
      // from the frame, where the call stored it: the frame's copy is the exact one.
      if (bcp < m->code || bcp >= m->code + m->code_size)
        bcp = reinterpret_cast<const uint8_t*>(load(regs.fp + runtime::kInterpFrameBcpOffset));
      if (bcp < m->code || bcp >= m->code + m->code_size) return WalkResult{"bad_bcp"};
      bci = int32_t(bcp - m->code);
    } else {
      // Leaving the frame (or jumping to OSR code): r13 still holds the instruction.
      auto* bcp = reinterpret_cast<const uint8_t*>(regs.r13);
      m = runtime::VM::get().method_containing(bcp);
      if (m == nullptr) return WalkResult{"bad_bcp"};
      bci = int32_t(bcp - m->code);
    }
    if (!put(CompactFrame{m, nullptr, bci, runtime::FrameKind::interp})) return WalkResult{"arena_full"};
  }
  // (In the safepoint blob the thread is at the poll: its caller, the polling frame, is
  // the top Mini frame, at the poll.)
  uintptr_t cfa = 0;
  if (!step_out(*row, regs, cfa, caller_pc, caller_fp)) return WalkResult{"no_frame_description"};
  return walk_callers(t, runtime::FramePos{cfa, caller_fp, caller_pc}, false, false, sink, r, UINT32_MAX);
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
    case runtime::FrameRow::Ra::at_cfa: ra = load(cfa + uintptr_t(int64_t(row.ra_offset))); break;
    case runtime::FrameRow::Ra::at_rsp: ra = load(regs.sp); break;
    case runtime::FrameRow::Ra::in_rax: ra = regs.rax; break;
    case runtime::FrameRow::Ra::in_rcx: ra = regs.rcx; break;
    case runtime::FrameRow::Ra::at_resume_pc: return false;
  }
  caller_fp = row.rbp == runtime::FrameRow::Rbp::saved    ? load(cfa + uintptr_t(int64_t(row.rbp_offset)))
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
  WalkResult result;
};
void run_walk(void* arg) {
  auto* w = static_cast<ProtectedWalk*>(arg);
  w->result = w->exact ? walk_exact(w->t, *w->regs, *w->sink) : walk_guess(w->t, *w->regs, *w->sink);
}
}  // namespace

WalkResult walk_protected(bool exact, runtime::Thread* t, const Registers& regs, FrameSink& sink) {
  ProtectedWalk w{exact, t, &regs, &sink, {}};
  if (!runtime::protected_call(&run_walk, &w)) return WalkResult{"crashed_in_walk"};
  return w.result;
}

}  // namespace sampler
