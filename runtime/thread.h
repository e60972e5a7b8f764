// Thread: one Mini thread, its state, its poll word and its last-Java-frame anchor.
//
// The first part (ThreadCore) is read and written by generated code at fixed offsets;
// everything after it is the VM's own.
#pragma once
#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "runtime/method.h"

namespace runtime {

enum class ThreadState : uint8_t {
  new_thread,  // created, not yet running Mini code
  in_java,     // running interpreted or compiled Mini code
  in_vm,       // in the runtime, called from Mini code (anchor set)
  in_native,   // in a native builtin (anchor set), may run for long
  blocked,     // waiting (join), anchor set
  terminated,
};
const char* thread_state_name(ThreadState s);

// Where the last Mini frame is while the thread is outside Mini code. sp != 0 means
// valid; it is written last when set and cleared first, so a reader that sees sp != 0
// sees fp and pc too.
struct LastJavaFrame {
  std::atomic<uintptr_t> sp{0};
  uintptr_t fp = 0;
  uintptr_t pc = 0;
};

struct ThreadCore {
  std::atomic<void*> poll_word;   // good page, or the bad page when armed
  // Compiled code's polls compare rsp with it (poll_asm.h): all ones, or 0 when armed.
  std::atomic<uintptr_t> poll_limit;
  uintptr_t stack_limit;          // method entry fails with stack overflow below this
  int64_t* globals;               // the module's global slots
  Method** methods;               // Method* by function index
  LastJavaFrame anchor;
  uintptr_t poll_resume_pc;       // where the safepoint blob returns to
  const void* const* dispatch_table;  // the interpreter's, loaded into r12 on entry
  int64_t* osr_buffer;            // locals handed from an interpreter frame to OSR code
  int64_t strip_countdown;        // counted-loop iterations left before a strip-mined poll
  uintptr_t tlab_top;             // the thread's allocation buffer (runtime/heap.h): next free byte
  uintptr_t tlab_end;             // and its end; both 0 when it has none
  // The stack watermark (return_barrier.h): how many frames below the marked one the
  // sampler has cached (0: no frame is marked), and the marked frame's real return pc.
  uint64_t barrier_depth;
  uintptr_t barrier_target;
  // Here rather than in Thread so that generated code can store it: the safepoint blob
  // keeps the thread in_vm from the poll trap until its last restoring instruction.
  std::atomic<ThreadState> state;
  uint8_t* cards;                 // card_table_biased() (runtime/heap.h), for the write barrier
  // The thread's pass counter per --slowdown site (Thread::slowdown_passes), which a
  // `slowdown` instruction adds one to: a plain add on the thread's own line, so that
  // counting costs no more than a store and no thread waits for another.
  uint64_t* slowdown_passes;
};

inline constexpr int32_t kThreadPollWordOffset = offsetof(ThreadCore, poll_word);
inline constexpr int32_t kThreadPollLimitOffset = offsetof(ThreadCore, poll_limit);
inline constexpr int32_t kThreadStackLimitOffset = offsetof(ThreadCore, stack_limit);
inline constexpr int32_t kThreadGlobalsOffset = offsetof(ThreadCore, globals);
inline constexpr int32_t kThreadMethodsOffset = offsetof(ThreadCore, methods);
inline constexpr int32_t kThreadAnchorSpOffset = offsetof(ThreadCore, anchor) + offsetof(LastJavaFrame, sp);
inline constexpr int32_t kThreadAnchorFpOffset = offsetof(ThreadCore, anchor) + offsetof(LastJavaFrame, fp);
inline constexpr int32_t kThreadAnchorPcOffset = offsetof(ThreadCore, anchor) + offsetof(LastJavaFrame, pc);
inline constexpr int32_t kThreadResumePcOffset = offsetof(ThreadCore, poll_resume_pc);
inline constexpr int32_t kThreadDispatchTableOffset = offsetof(ThreadCore, dispatch_table);
inline constexpr int32_t kThreadOsrBufferOffset = offsetof(ThreadCore, osr_buffer);
inline constexpr int32_t kThreadStateOffset = offsetof(ThreadCore, state);
inline constexpr int32_t kThreadStripCountdownOffset = offsetof(ThreadCore, strip_countdown);
inline constexpr int32_t kThreadTlabTopOffset = offsetof(ThreadCore, tlab_top);
inline constexpr int32_t kThreadTlabEndOffset = offsetof(ThreadCore, tlab_end);
inline constexpr int32_t kThreadCardsOffset = offsetof(ThreadCore, cards);
inline constexpr int32_t kThreadBarrierDepthOffset = offsetof(ThreadCore, barrier_depth);
inline constexpr int32_t kThreadBarrierTargetOffset = offsetof(ThreadCore, barrier_target);
inline constexpr int32_t kThreadSlowdownPassesOffset = offsetof(ThreadCore, slowdown_passes);
static_assert(sizeof(std::atomic<ThreadState>) == 1);

class Thread {
 public:
  ThreadCore core;  // must stay first: generated code addresses it through r15

  int id = 0;                 // 0 = main, spawned threads count up from 1 (their handle)
  std::atomic<int> tid{0};    // the kernel's thread id once running (for tgkill), else 0
  // Owned by the sampler (sampler/): its per-thread ring and counters. Set before the
  // thread runs Mini code, read from signal handlers.
  std::atomic<void*> sampler_state{nullptr};
  // Set while another thread walks this thread's stack from its anchor; a thread
  // returning to Java waits until it is clear (DESIGN.md, "Thread states").
  std::atomic<bool> walk_in_progress{false};

  // The thread's stack (lowest usable address and top), and the guard below it.
  uintptr_t stack_low = 0, stack_high = 0, guard_low = 0;

  // Startup: what the thread runs.
  Method* start_method = nullptr;
  std::vector<int64_t> start_args;
  int64_t result = 0;
  // An array the runtime made for this thread and has not yet handed to Mini code (HotSpot's
  // vm_result): a root, since the way back to Java may stop at a safepoint first.
  int64_t vm_result = 0;
  std::vector<int64_t> osr_buffer;  // core.osr_buffer points into it
  std::vector<uint64_t> slowdown_passes;  // core.slowdown_passes points into it

  // The thread this one waits for in `join`, or nullptr: the edges in which a deadlock is
  // found (runtime/natives.cpp, under its join lock).
  Thread* joining = nullptr;

  pthread_t pthread{};
  std::mutex done_mutex;
  std::condition_variable done_cv;
  bool done = false;

  Thread();
  Thread(const Thread&) = delete;
  Thread& operator=(const Thread&) = delete;

  // Whether a is on this thread's stack. Threads that did not record their bounds (tests
  // on foreign threads) are trusted with any non-null address.
  bool on_stack(uintptr_t a) const { return stack_high == 0 ? a != 0 : a >= stack_low && a < stack_high; }

  ThreadState get_state() const { return core.state.load(std::memory_order_acquire); }
  void set_state(ThreadState s) { core.state.store(s, std::memory_order_seq_cst); }
  bool has_anchor() const { return core.anchor.sp.load(std::memory_order_acquire) != 0; }

  // The current thread, or nullptr on a thread that is not a Mini thread.
  static Thread* current();
  static void set_current(Thread* t);
};

// Leaving Mini code: the anchor was set by the generated caller; record the state.
// Coming back: wait while a walker holds the stack, then resume Java.
void transition_from_java(Thread* t, ThreadState to);
void transition_to_java(Thread* t);

// RAII for runtime code called from Mini code.
class ThreadInVM {
 public:
  explicit ThreadInVM(Thread* t, ThreadState s = ThreadState::in_vm) : t_(t) { transition_from_java(t_, s); }
  ~ThreadInVM() { transition_to_java(t_); }
  ThreadInVM(const ThreadInVM&) = delete;
  ThreadInVM& operator=(const ThreadInVM&) = delete;

 private:
  Thread* t_;
};

}  // namespace runtime
