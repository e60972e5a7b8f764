// StackWalker: yields a thread's Mini frames, top first, starting from a frame position
// (normally the thread's last-Java-frame anchor).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/frame_kind.h"
#include "runtime/compiled_code.h"
#include "runtime/method.h"

namespace runtime {

class Thread;
struct CodeBlob;

// Mini frames (interp, jit, inlined), generated stubs, Mini natives (the builtin a thread
// in native code is in), and C/C++ frames of the VM and the libraries (`cpp`: only in
// mixed stacks, `--native-frames`): base/frame_kinds.def.
using base::FrameKind;
using base::frame_kind_name;
using base::kFrameKindCount;

// Why a walk ended.
enum class WalkStop : uint8_t {
  entry,                    // the call stub that entered Mini code: the whole stack was walked
  no_anchor,                // walking from the anchor of a thread that has none
  unknown_pc,               // a pc in no code blob
  frame_kind_not_walkable,  // a pc in a stub or the safepoint blob (the samplers step out of those)
  bad_fp,                   // a frame pointer off the thread's stack or misaligned
  return_barrier,           // (asked for) after the frame marked by the return barrier
};

struct FramePos {
  uintptr_t sp = 0, fp = 0, pc = 0;
};

struct Frame {
  FrameKind kind = FrameKind::interp;
  const Method* method = nullptr;
  int32_t bci = -1;
  uint32_t line = 0;
  FramePos pos;  // this frame's own sp, fp, pc
};

class StackWalker {
 public:
  // Walks from t's anchor, set while the thread is in the VM, native or at a poll; with
  // none (no Mini frames), the walk is empty and stop() is no_anchor.
  explicit StackWalker(Thread* t);
  // Walks from an explicit position (tests, samplers). `exact_pc`: start.pc is the pc of
  // an instruction about to run (a sampled pc) rather than a return or resume address.
  StackWalker(Thread* t, FramePos start, bool exact_pc = false);

  // Fills `f` with the next frame and returns true, or returns false at the end of the
  // Mini stack (the call stub that entered Mini code, or a position it cannot parse).
  bool next(Frame& f);
  // Ends the walk after the frame the return barrier marks (return_barrier.h): what lies
  // below it is cached. stop() is then return_barrier and marked_slot() that frame's slot.
  void stop_at_return_barrier() { stop_at_barrier_ = true; }
  uintptr_t* marked_slot() const { return marked_slot_; }
  // Why the walk ended (once next has returned false).
  WalkStop stop() const { return stop_; }
  // The pc the walk stopped at (for unknown_pc: the pc no blob holds).
  uintptr_t stop_pc() const { return pos_.pc; }

 private:
  bool next_physical(Frame& f);
  uintptr_t sender_pc(uintptr_t* fp);  // the frame at fp's return pc, its mark noted

  Thread* thread_;
  FramePos pos_;
  bool exact_pc_ = false;
  // The current compiled frame's scopes, from scope_next_ still to yield.
  ScopeChain scopes_;
  uint32_t scope_next_ = 0;
  FramePos code_pos_;
  bool done_ = false;
  WalkStop stop_ = WalkStop::entry;
  bool stop_at_barrier_ = false;
  uintptr_t* marked_slot_ = nullptr;  // set when the frame just yielded is the marked one
  // The blob of the frame before: a recursion's frames are all in one blob, and the
  // registry's lookup costs two shared atomic updates. A blob a walk has met stays valid
  // for the walk, as every blob find_blob returns must.
  const CodeBlob* last_blob_ = nullptr;
  // The scopes of the last compiled pc expanded: a recursion returns to one pc again and
  // again, and each expansion is a search of the pc descs.
  uintptr_t scopes_pc_ = 0;
  bool scopes_exact_ = false;
  ScopeChain last_scopes_;
};

// Every frame of t's stack from its anchor (none without one), top first, inlined scopes
// included.
std::vector<Frame> frames_from_anchor(Thread* t);

}  // namespace runtime
