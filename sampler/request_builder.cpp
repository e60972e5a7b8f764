#include "runtime/code_blob.h"
#include "runtime/frame.h"
#include "runtime/method.h"
#include "sampler/context_walk.h"
#include "sampler/sample_request.h"

namespace sampler {

namespace {
// For a request rebuilt over its caller: the caller's position now, from the exact frame
// description (nothing recorded when the blob has none: the caller's poll-time position
// is used then).
void record_caller_position(SampleRequest& r, const runtime::CodeBlob* blob, const Registers& regs) {
  const runtime::FrameRow* row = blob->frame_row_at(regs.pc);
  uintptr_t cfa = 0, ra = 0, caller_fp = 0;
  if (row == nullptr || !step_out(*row, regs, cfa, ra, caller_fp) || caller_fp != r.caller_fp) return;
  r.caller_pc = ra;
  const runtime::CodeBlob* caller = runtime::find_blob(ra);
  if (caller != nullptr && caller->kind == runtime::BlobKind::interpreter)
    r.caller_bcp = reinterpret_cast<const uint8_t*>(stack_word(caller_fp + runtime::kInterpFrameBcpOffset));
}
}  // namespace

InterpPosition interrupted_interp_position(const Registers& regs) {
  auto* m = reinterpret_cast<const runtime::Method*>(stack_word(regs.fp + runtime::kInterpFrameMethodOffset));
  auto* bcp = reinterpret_cast<const uint8_t*>(regs.r13);
  if (!m->holds(bcp)) bcp = reinterpret_cast<const uint8_t*>(stack_word(regs.fp + runtime::kInterpFrameBcpOffset));
  return InterpPosition{m, bcp};
}

SampleRequest build_request(const Registers& regs, bool stub_metadata) {
  SampleRequest r;
  r.pc = regs.pc;
  r.sp = regs.sp;
  r.fp = regs.fp;
  r.in_vm_code = regs.in_vm_code;
  const runtime::CodeBlob* blob = runtime::find_blob(regs.pc);
  if (blob == nullptr) {
    r.reason = Reason::unknown_pc;  // C++ code of a thread entering or leaving Mini code (registers_of)
    return r;
  }
  const runtime::PcRange* special = blob->special_at(regs.pc);
  // Where the caller's frame is when the top frame is half built or half torn down.
  auto caller_fp = [&] {
    return special->info().rbp == runtime::PcRangeInfo::Rbp::callers ? regs.fp
                                                                      : stack_word(regs.fp + runtime::kFrameSavedFpOffset);
  };
  using Kind = runtime::PcRangeKind;
  switch (blob->kind) {
    case runtime::BlobKind::compiled:
      // Prologue pcs need nothing special: at the next poll the frame is complete and
      // its real fp lies above this sp (JEP 518, "Benefits" 1).
      if (special != nullptr && (special->kind == Kind::epilogue || special->kind == Kind::epilogue_left)) {
        r.kind = RequestKind::compiled_over_caller;
        r.caller_fp = caller_fp();
      } else {
        r.kind = RequestKind::compiled;
      }
      if (r.kind == RequestKind::compiled_over_caller) record_caller_position(r, blob, regs);
      return r;
    case runtime::BlobKind::interpreter:
      if (special != nullptr && special->info().phase == runtime::PcRangeInfo::Phase::entry) {
        // The callee's Method* is in rbx throughout the method entry.
        r.kind = RequestKind::interpreted_over_caller;
        r.method = reinterpret_cast<const runtime::Method*>(regs.rbx);
        r.caller_fp = caller_fp();
        record_caller_position(r, blob, regs);
      } else if (special != nullptr && special->info().phase == runtime::PcRangeInfo::Phase::exit) {
        // r13 still holds the returning instruction; the method is found from it later.
        r.kind = RequestKind::interpreted_over_caller;
        r.bcp = reinterpret_cast<const uint8_t*>(regs.r13);
        r.caller_fp = caller_fp();
        record_caller_position(r, blob, regs);
      } else {
        r.kind = RequestKind::interpreted;
        InterpPosition at = interrupted_interp_position(regs);
        r.method = at.method;
        r.bcp = at.bcp;
      }
      return r;
    case runtime::BlobKind::stub: {
      const runtime::StubFrame* sf = stub_metadata ? blob->stub_frame_at(regs.pc) : nullptr;
      if (sf == nullptr) {
        r.reason = Reason::pc_in_stub;  // frameless and undescribed: nothing says where its caller is
        return r;
      }
      runtime::FramePos caller = step_out_of_stub(*sf, regs);
      r.kind = RequestKind::stub;
      r.pc = caller.pc;
      r.sp = caller.sp;
      r.stub_name = blob->frame_name.c_str();
      return r;
    }
    case runtime::BlobKind::call_stub:
    case runtime::BlobKind::safepoint_blob:
    case runtime::BlobKind::return_barrier:  // registers_of moved the pc out of it
      r.reason = Reason::pc_in_runtime_stub;
      return r;
  }
  r.reason = Reason::unknown_pc;
  return r;
}

}  // namespace sampler
