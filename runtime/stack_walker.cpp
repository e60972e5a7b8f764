#include "runtime/stack_walker.h"

#include "runtime/code_blob.h"
#include "runtime/compiled_code.h"
#include "runtime/frame.h"
#include "runtime/invariant.h"
#include "runtime/return_barrier.h"
#include "runtime/thread.h"

namespace runtime {

const char* frame_kind_name(FrameKind k) {
  switch (k) {
#define FRAME_KIND(name, hue, meaning) \
  case FrameKind::name: return #name;
#include "runtime/frame_kinds.def"
#undef FRAME_KIND
  }
  MVM_ASSERT(false, "a FrameKind is one of frame_kinds.def's kinds");
  return "?";
}

int frame_kind_hue(FrameKind k) {
  switch (k) {
#define FRAME_KIND(name, hue, meaning) \
  case FrameKind::name: return hue;
#include "runtime/frame_kinds.def"
#undef FRAME_KIND
  }
  MVM_ASSERT(false, "a FrameKind is one of frame_kinds.def's kinds");
  return -1;
}

StackWalker::StackWalker(Thread* t) : thread_(t) {
  pos_.sp = t->core.anchor.sp.load(std::memory_order_acquire);
  pos_.fp = t->core.anchor.fp;
  pos_.pc = real_return_pc(t->core, t->core.anchor.pc);
  if (pos_.sp == 0) {
    done_ = true;
    stop_ = WalkStop::no_anchor;
  }
}

StackWalker::StackWalker(Thread* t, FramePos start, bool exact_pc) : thread_(t), pos_(start), exact_pc_(exact_pc) {
  pos_.pc = real_return_pc(t->core, pos_.pc);
}

uintptr_t StackWalker::sender_pc(uintptr_t* fp) {
  uintptr_t* slot = &fp[kFrameReturnPcOffset / 8];
  if (*slot == return_barrier_entry() && stop_at_barrier_) marked_slot_ = slot;
  return real_return_pc(thread_->core, *slot);
}

bool StackWalker::next(Frame& f) {
  if (scope_next_ < scopes_.count) {
    uint32_t k = scope_next_++;
    const Scope& sc = scopes_[k];
    f.kind = scopes_.kind(k);
    f.method = sc.method;
    f.bci = sc.bci;
    f.line = sc.method->function->line_at(uint32_t(sc.bci));
    f.pos = code_pos_;
    return true;
  }
  scopes_ = ScopeChain{};
  scope_next_ = 0;
  return next_physical(f);
}

bool StackWalker::next_physical(Frame& f) {
  if (done_) return false;
  if (marked_slot_ != nullptr) {
    done_ = true;
    stop_ = WalkStop::return_barrier;
    return false;
  }
  const CodeBlob* blob = last_blob_ != nullptr && last_blob_->contains(pos_.pc) ? last_blob_ : find_blob(pos_.pc);
  last_blob_ = blob;
  if (blob == nullptr || blob->kind == BlobKind::call_stub) {
    done_ = true;
    if (blob == nullptr) stop_ = WalkStop::unknown_pc;
    return false;
  }
  if (blob->kind != BlobKind::interpreter && blob->kind != BlobKind::compiled) {
    // Stubs are walked by the samplers that know their frames (--stub-metadata).
    done_ = true;
    stop_ = WalkStop::frame_kind_not_walkable;
    return false;
  }
  if (!thread_->on_stack(pos_.fp) || (pos_.fp & 7) != 0) {
    done_ = true;
    stop_ = WalkStop::bad_fp;
    return false;
  }
  auto* fp = reinterpret_cast<uintptr_t*>(pos_.fp);
  if (blob->kind == BlobKind::compiled) {
    auto* code = static_cast<const CompiledCode*>(blob);
    if (pos_.pc != scopes_pc_ || exact_pc_ != scopes_exact_ || scopes_pc_ == 0) {
      last_scopes_ = exact_pc_ ? code->scopes_at(pos_.pc) : code->scopes_at_return(pos_.pc);
      scopes_pc_ = pos_.pc;
      scopes_exact_ = exact_pc_;
    }
    scopes_ = last_scopes_;
    scope_next_ = 0;
    exact_pc_ = false;
    code_pos_ = pos_;
    pos_.pc = sender_pc(fp);
    pos_.fp = fp[kFrameSavedFpOffset / 8];
    pos_.sp = sender_sp(code_pos_.fp, code->method->param_count);
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
  pos_.pc = sender_pc(fp);
  pos_.fp = fp[kFrameSavedFpOffset / 8];
  pos_.sp = locals + 8;
  return true;
}

std::vector<Frame> frames_from_anchor(Thread* t) {
  std::vector<Frame> frames;
  StackWalker w(t);
  Frame f;
  while (w.next(f)) frames.push_back(f);
  return frames;
}

}  // namespace runtime
