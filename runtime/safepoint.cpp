#include "runtime/safepoint.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/clock.h"
#include "runtime/invariant.h"
#include "runtime/poll.h"
#include "runtime/thread.h"
#include "runtime/vm.h"

namespace runtime {

namespace {

std::mutex g_requesters;           // one safepoint at a time
std::mutex g_wait_mutex;           // guards the wait of stopped threads
std::condition_variable g_resume;  // signalled when the safepoint ends
std::atomic<bool> g_pending{false};
std::atomic<uint64_t> g_count{0};
SafepointStats g_current;          // the running safepoint's, while its operation runs

// A thread's time on a CPU so far, from the clock Linux keeps for every thread, named by
// its kernel id (pthread_getcpuclockid's clock, made from the id, so a thread that ends
// meanwhile makes the read fail instead of reading its freed pthread); 0 when it cannot.
uint64_t thread_cpu_ns(const Thread* t) {
  int tid = t->tid.load(std::memory_order_acquire);
  if (tid == 0) return 0;
  clockid_t clock = clockid_t(int((~unsigned(tid)) << 3 | 6u));  // per thread (4), scheduler time (2)
  timespec ts;
  if (clock_gettime(clock, &ts) != 0) return 0;
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// A thread that cannot run Mini code until the safepoint ends: not started, in native
// code, blocked (a join, a sleep, or stopped here), or ended.
bool is_safe(ThreadState s) {
  switch (s) {
    case ThreadState::new_thread:
    case ThreadState::in_native:
    case ThreadState::blocked:
    case ThreadState::terminated:
      return true;
    case ThreadState::in_java:
    case ThreadState::in_vm:
      return false;
  }
  MVM_ASSERT(false, "a ThreadState is one of its enumerators");
  return false;
}

}  // namespace

bool safepoint_pending() { return g_pending.load(std::memory_order_seq_cst); }

uint64_t safepoint_count() { return g_count.load(std::memory_order_relaxed); }

void block_at_safepoint(Thread* t, int resume_state) {
  std::unique_lock<std::mutex> lock(g_wait_mutex);
  if (!g_pending.load(std::memory_order_seq_cst)) return;
  t->set_state(ThreadState::blocked);
  g_resume.wait(lock, [] { return !g_pending.load(std::memory_order_seq_cst); });
  t->set_state(ThreadState(resume_state));  // still under the lock (see run_at_safepoint)
}

namespace {

// Waiting for threads to stop: spin a little (most stop within microseconds), then sleep
// for doubling periods up to 1 ms, so a long time to safepoint does not take a core
// from the very thread it waits for.
class Backoff {
 public:
  void wait() {
    if (spins_ < 100) {
      spins_++;
      std::this_thread::yield();
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(sleep_us_));
    sleep_us_ = std::min(sleep_us_ * 2, 1000);
  }

 private:
  int spins_ = 0;
  int sleep_us_ = 10;
};

// Takes the requesters' lock. A Mini thread waits for it as `blocked` (its anchor is
// set: it is in the VM), so the safepoint it waits for can stop it: two threads that
// both need a collection must not wait for each other.
std::unique_lock<std::mutex> become_requester(Thread* self) {
  std::unique_lock<std::mutex> lock(g_requesters, std::try_to_lock);
  if (lock.owns_lock() || self == nullptr || !self->has_anchor()) {
    if (!lock.owns_lock()) lock.lock();
    return lock;
  }
  ThreadState was = self->get_state();
  self->set_state(ThreadState::blocked);
  lock.lock();
  // Starting a safepoint takes this lock, and ending one clears the flag before it is
  // released: returning to `was` (perhaps in_vm) cannot hide this thread from one.
  MVM_ASSERT(!g_pending.load(std::memory_order_seq_cst),
             "a safepoint is pending only while its requester holds the requesters' lock");
  self->set_state(was);
  return lock;
}

}  // namespace

const SafepointStats& current_safepoint() { return g_current; }

SafepointStats run_at_safepoint(const std::function<void()>& op) {
  Thread* self = Thread::current();
  uint64_t start = monotonic_ns();
  std::unique_lock<std::mutex> one_at_a_time = become_requester(self);
  SafepointStats stats;
  stats.start_ns = start;
  stats.id = g_count.load(std::memory_order_relaxed) + 1;  // one requester at a time
  {
    // Under the wait mutex: a thread leaving the previous safepoint restores its state
    // under it too, so no state read below is a stale `blocked` of a thread on its way out.
    std::lock_guard<std::mutex> lock(g_wait_mutex);
    g_pending.store(true, std::memory_order_seq_cst);
  }
  // Each thread to wait for, with its CPU clock when its poll was armed, and whether it
  // was running (not safe) then, so that stopping was its own doing: a thread polling
  // every iteration stops before the first look below, and is still one the safepoint
  // waited for.
  struct Waited {
    Thread* thread;
    uint64_t cpu_at_arming;
    bool ran_at_arming;
  };
  std::vector<Waited> waiting;
  for (Thread* t : VM::get().threads()) {
    if (t == self || t->get_state() == ThreadState::terminated) continue;
    bool was_safe = is_safe(t->get_state());
    arm_poll(t);  // left armed afterwards: one spurious trap is harmless, and disarming
                  // could hide a sample request the sampler armed meanwhile
    waiting.push_back(Waited{t, thread_cpu_ns(t), !was_safe});
  }
  stats.threads = int(waiting.size());
  // Wait until every thread has been seen safe once: the pending flag keeps it so.
  Backoff backoff;
  for (bool first_look = true; !waiting.empty(); first_look = false) {
    for (size_t i = 0; i < waiting.size();) {
      const Waited& w = waiting[i];
      if (is_safe(w.thread->get_state())) {
        if (!first_look || w.ran_at_arming) {  // had to be waited for
          stats.slowest_thread = w.thread->id;
          stats.slowest_pc = w.thread->core.anchor.pc;
          uint64_t cpu = thread_cpu_ns(w.thread);
          stats.slowest_cpu_ns = cpu > w.cpu_at_arming && w.cpu_at_arming != 0 ? cpu - w.cpu_at_arming : 0;
        }
        waiting[i] = waiting.back();
        waiting.pop_back();
      } else {
        i++;
      }
    }
    if (!waiting.empty()) backoff.wait();
  }
  uint64_t stopped = monotonic_ns();
  stats.time_to_safepoint_ns = stopped - start;
  g_current = stats;
  op();
  stats.operation_ns = monotonic_ns() - stopped;
  {
    std::lock_guard<std::mutex> lock(g_wait_mutex);
    g_pending.store(false, std::memory_order_seq_cst);
  }
  stats.end_ns = monotonic_ns();
  g_resume.notify_all();
  g_count.fetch_add(1, std::memory_order_relaxed);
  return stats;
}

}  // namespace runtime
