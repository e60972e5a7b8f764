#include "runtime/thread.h"

#include <sched.h>

#include "runtime/gc.h"
#include "runtime/heap.h"
#include "runtime/invariant.h"
#include "runtime/poll.h"
#include "runtime/safepoint.h"

namespace runtime {

namespace {
thread_local Thread* tls_current = nullptr;
thread_local bool tls_collecting_a_lot = false;
}

const char* thread_state_name(ThreadState s) {
  switch (s) {
    case ThreadState::new_thread: return "new";
    case ThreadState::in_java: return "in_java";
    case ThreadState::in_vm: return "in_vm";
    case ThreadState::in_native: return "in_native";
    case ThreadState::blocked: return "blocked";
    case ThreadState::terminated: return "terminated";
  }
  MVM_ASSERT(false, "a ThreadState is one of its enumerators");
  return "?";
}

Thread::Thread() {
  MVM_ASSERT(static_cast<void*>(&core) == static_cast<void*>(this),
             "ThreadCore is at a Thread's address: generated code reads it through r15, which holds the Thread*");
  core.poll_word.store(poll_pages().good, std::memory_order_relaxed);
  core.poll_limit.store(kPollLimitDisarmed, std::memory_order_relaxed);
  core.stack_limit = 0;
  core.globals = nullptr;
  core.methods = nullptr;
  core.poll_resume_pc = 0;
  core.dispatch_table = nullptr;
  core.osr_buffer = nullptr;
  core.strip_countdown = int64_t(1) << 20;
  core.tlab_top = 0;
  core.barrier_depth = 0;
  core.barrier_target = 0;
  core.tlab_end = 0;
  core.cards = card_table_biased();
  core.slowdown_passes = nullptr;
  core.state.store(ThreadState::new_thread, std::memory_order_relaxed);  // sized by VM::attach_current for the loaded module
}

Thread* Thread::current() { return tls_current; }
void Thread::set_current(Thread* t) { tls_current = t; }

// A release store: whoever reads the new state (a sampler, the VM at a safepoint) then
// sees the anchor the generated caller stored before. Leaving Java needs no fence, as
// entering it does (below): a reader that still sees in_java only acts as if the thread
// had left a moment later.
void transition_from_java(Thread* t, ThreadState to) { t->core.state.store(to, std::memory_order_release); }

void transition_to_java(Thread* t) {
  // `--gc-a-lot`: collect here, where any other thread's collection could stop this one,
  // so that a frame whose stack map does not match its slots at this point is caught
  // every time rather than once in a few thousand runs.
  if (gc_a_lot() && t->has_anchor() && !tls_collecting_a_lot) {
    tls_collecting_a_lot = true;
    collect(t, GcCause::a_lot, gc_count());
    tls_collecting_a_lot = false;
  }
  // A walker that saw us outside Java holds walk_in_progress until it is done with our
  // stack, and a global safepoint keeps every thread out of Java until it ends; we must
  // not run Mini code (and change the frames they read) before either is over.
  for (;;) {
    while (t->walk_in_progress.load(std::memory_order_acquire)) sched_yield();
    if (safepoint_pending()) block_at_safepoint(t, int(t->get_state()));
    t->set_state(ThreadState::in_java);
    if (!t->walk_in_progress.load(std::memory_order_seq_cst) && !safepoint_pending()) return;
    // A walker or a safepoint started between our check and the store: step back (in
    // the VM, which neither takes for safe) and wait for it.
    t->set_state(ThreadState::in_vm);
  }
}

}  // namespace runtime
