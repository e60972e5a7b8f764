#include "runtime/stack_walker.h"

#include "runtime/code_blob.h"
#include "runtime/compiled_code.h"
#include "runtime/frame.h"
#include "runtime/thread.h"

namespace runtime {

const char* frame_kind_name(FrameKind k) {
  switch (k) {
    case FrameKind::interp: return "interp";
    case FrameKind::jit: return "jit";
    case FrameKind::inlined: return "inlined";
    case FrameKind::stub: return "stub";
    case FrameKind::native: return "native";
  }
  return "?";
}

StackWalker::StackWalker(Thread* t) : thread_(t) {
  pos_.sp = t->core.anchor.sp.load(std::memory_order_acquire);
  pos_.fp = t->core.anchor.fp;
  pos_.pc = t->core.anchor.pc;
  if (pos_.sp == 0) {
    done_ = true;
    stop_reason_ = "no anchor";
  }
}

StackWalker::StackWalker(Thread* t, FramePos start, bool exact_pc) : thread_(t), pos_(start), exact_pc_(exact_pc) {}

bool StackWalker::next(Frame& f) {
  if (code_ != nullptr && scope_next_ < scope_end_) {
    const Scope& sc = code_->scopes[scope_next_++];
    f.kind = scope_next_ == scope_end_ ? FrameKind::jit : FrameKind::inlined;
    f.method = sc.method;
    f.bci = sc.bci;
    f.line = sc.method->function->line_at(uint32_t(sc.bci));
    f.pos = code_pos_;
    return true;
  }
  code_ = nullptr;
  return next_physical(f);
}

bool StackWalker::next_physical(Frame& f) {
  if (done_) return false;
  const CodeBlob* blob = find_blob(pos_.pc);
  if (blob == nullptr || blob->kind == BlobKind::call_stub) {
    done_ = true;
    if (blob == nullptr) stop_reason_ = "unknown pc";
    return false;
  }
  if (blob->kind != BlobKind::interpreter && blob->kind != BlobKind::compiled) {
    // Stubs are walked by the samplers that know their frames (--stub-metadata).
    done_ = true;
    stop_reason_ = "frame kind not walkable";
    return false;
  }
  if (!thread_->on_stack(pos_.fp) || (pos_.fp & 7) != 0) {
    done_ = true;
    stop_reason_ = "bad fp";
    return false;
  }
  auto* fp = reinterpret_cast<uintptr_t*>(pos_.fp);
  if (blob->kind == BlobKind::compiled) {
    auto* code = static_cast<const CompiledCode*>(blob);
    // A return or resume address belongs to the instruction before it.
    uintptr_t lookup_pc = exact_pc_ ? pos_.pc : pos_.pc - 1;
    exact_pc_ = false;
    const PcDesc& d = code->desc_at(lookup_pc);
    code_ = code;
    code_pos_ = pos_;
    scope_next_ = d.scope_begin;
    scope_end_ = d.scope_begin + d.scope_count;
    pos_.pc = fp[kFrameReturnPcOffset / 8];
    pos_.fp = fp[kFrameSavedFpOffset / 8];
    pos_.sp = code_pos_.fp + 16 + 8 * uintptr_t(code->method->param_count);
    return next(f);
  }
  exact_pc_ = false;
  auto* method = reinterpret_cast<const Method*>(fp[kInterpFrameMethodOffset / 8]);
  auto* bcp = reinterpret_cast<const uint8_t*>(fp[kInterpFrameBcpOffset / 8]);
  uintptr_t locals = fp[kInterpFrameLocalsOffset / 8];
  f.kind = FrameKind::interp;
  f.method = method;
  f.pos = pos_;
  f.bci = int32_t(bcp - method->code);
  if (f.bci < 0 || uint32_t(f.bci) >= method->code_size) f.bci = 0;
  f.line = method->function->line_at(uint32_t(f.bci));
  // The sender: return pc and saved rbp above us; its sp is where our arguments began.
  pos_.pc = fp[kFrameReturnPcOffset / 8];
  pos_.fp = fp[kFrameSavedFpOffset / 8];
  pos_.sp = locals + 8;
  return true;
}

}  // namespace runtime
