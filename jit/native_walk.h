// Native stack walks with LLVM libunwind (jit/llvm_unwind.h), through C++ frames and,
// by the CFI registered for generated code (jit/code_registration.h), through Mini
// frames, the call stub and the safepoint blob, down to the thread's start.
//
// LLVM libunwind applies a row to pc-1 ("return address" semantics) even for the top
// frame of a signal context; walk_native_stack_from() corrects for that.
#pragma once
#include <cstddef>
#include <cstdint>

namespace runtime {
struct ThreadCore;
}

namespace jit {

struct NativeFrame {
  uintptr_t pc = 0;  // frame 0 of a context walk: the interrupted pc; otherwise a return address
  uintptr_t sp = 0;  // the frame's rsp
  uintptr_t fp = 0;  // the frame's rbp
};
enum class WalkEnd : uint8_t {
  end_of_stack,  // unw_step returned 0: the outermost frame (or a pc without unwind info)
  error,         // unw_step failed
  truncated,     // `max` frames filled
  unavailable,   // no LLVM libunwind
};
struct NativeWalk {
  size_t count = 0;
  WalkEnd end = WalkEnd::unavailable;
};
// Walks the calling thread's stack with unw_getcontext/unw_init_local/unw_step; frame 0
// is the caller of this function. With `core` (the walked thread's), a return pc that is
// the return barrier's entry (a frame the stack watermark marked, runtime/return_barrier.h)
// is replaced by the real one, ThreadCore::barrier_target, and the walk goes on from it:
// the barrier's own CFI describes a thread inside it, not a return into it.
NativeWalk walk_native_stack(NativeFrame* frames, size_t max, const runtime::ThreadCore* core = nullptr);
// Walks from an interrupted context (a signal handler's `ucontext_t*`); frame 0 is the
// interrupted pc, described exactly (not as a return address). Async-signal-safe as far
// as LLVM libunwind is (no allocation; its FDE lookup takes dl_iterate_phdr's lock).
NativeWalk walk_native_stack_from(const void* ucontext, NativeFrame* frames, size_t max,
                                  const runtime::ThreadCore* core = nullptr);
// The same from a caller's frame: `pc` is a return address (its call's row describes the
// frame), `sp` and `fp` the frame's; the other registers are the context's. For a code
// without unwind info of its own that a frame table steps out of (a frameless stub).
NativeWalk walk_native_stack_from_caller(const void* ucontext, uintptr_t pc, uintptr_t sp, uintptr_t fp,
                                         NativeFrame* frames, size_t max, const runtime::ThreadCore* core = nullptr);

}  // namespace jit
