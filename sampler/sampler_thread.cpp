// The sampler thread: every --interval it visits up to threads_per_period threads,
// round-robin. A thread in Java is interrupted (SIGPROF; its handler is in
// interruption.cpp); when the handler must wait (classical, --suspend=handshake) this
// thread holds it, walks it (classical), builds its request and lets it go. A thread in
// native code is not signalled: its stack is walked here from its anchor. Between visits
// it records the walks the handlers made (async, oracle) and the requests the threads'
// stores left out (drops, each with its id) into its own event buffer.
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "runtime/invariant.h"
#include "runtime/stack_walker.h"
#include "runtime/vm.h"
#include "sampler/profiler_state.h"
#include "vm/builtins.h"
#include "vm/opcodes.h"

namespace sampler {

namespace {

// Frames of the classical walk: the sampler thread's own pre-allocated buffer.
class BufferSink : public FrameSink {
 public:
  explicit BufferSink(std::vector<CompactFrame>& buf) : buf_(buf) { buf_.clear(); }
  bool put(const CompactFrame& f) override {
    if (buf_.size() == buf_.capacity()) return false;
    buf_.push_back(f);
    return true;
  }

 private:
  std::vector<CompactFrame>& buf_;
};

// A walk's outcome for one sampler, recorded in the sampler thread's buffer.
// A sample is biased when the walk said so (WalkResult::biased).
void record_walk(SamplerId sampler, const std::optional<Reason>& failure, const std::optional<Reason>& biased,
                 const StackTrace& trace, bool truncated, bool freed_code, uint64_t id, uint64_t ticks, uint64_t held,
                 int thread) {
  EventBuffer& b = g_state.sampler.events;
  std::lock_guard<std::mutex> lock(b.mutex);
  if (freed_code) b.part.stats[sampler].freed_code++;
  if (failure)
    record_failure(b, sampler, *failure, id, ticks, thread);
  else
    record_sample(b, sampler, id, ticks, held, thread, b.part.stacks.intern(trace, truncated), biased, truncated);
}

// A failed interruption for every sampler, ended by the sampler thread itself. A
// thread_gone failure has no id (no event), like those counted when a thread ends.
void record_send_failure(ThreadSampling* st, Reason reason) {
  uint64_t id = reason == Reason::thread_gone ? 0 : g_state.signals.next_sample.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(g_state.sampler.events.mutex);
  record_failure_all(g_state.sampler.events, reason, id, now_ns(), st->thread_id);
}

enum class Sent { no, yes, gone };

// How long the sampler thread waits for a thread it holds to take its signal, and for
// its visits of one period: the thread list is locked meanwhile, and thread starts and
// ends, dumps and the .jsonl flush wait for it.
constexpr uint64_t kHoldWaitNs = 100'000'000;

// Sends SIGPROF for a handler to serve (kSent) or to be held (kSentHold): `no` while the
// previous signal is still pending (this one would merge with it) or its handler still
// runs, `gone` when the thread has exited. Once sent, the signal is the handler's to take
// (profiler_state.h).
// A thread in native code may be signalled while its previous handler still runs
// (`while_in_handler`): it has no poll to reach, and its Mini frames stay put; the signal
// waits for that handler to return. A thread in Java may not (kInHandler, profiler_state.h).
Sent signal_thread(ThreadSampling* st, pid_t pid, int tid, int kind, bool while_in_handler = false) {
  int none = ThreadSampling::kNoSignal;
  if (!st->signal.compare_exchange_strong(none, kind, std::memory_order_acq_rel)) {
    int running = ThreadSampling::kInHandler;
    if (!while_in_handler || !st->signal.compare_exchange_strong(running, kind, std::memory_order_acq_rel))
      return Sent::no;
  }
  if (syscall(SYS_tgkill, pid, tid, SIGPROF) == 0) return Sent::yes;
  // Not sent; a handler can have taken it meanwhile only from a SIGPROF someone else sent,
  // and then serves it as ours.
  int mine = kind;
  return st->signal.compare_exchange_strong(mine, ThreadSampling::kNoSignal, std::memory_order_acq_rel) ? Sent::gone
                                                                                                         : Sent::yes;
}

// Sends SIGPROF and counts the interruption; false (with the failure recorded) when the
// signal could not be sent: the previous one is still pending (it would merge with it),
// or the thread is gone.
bool send_signal(ThreadSampling* st, pid_t pid, int tid, int kind) {
  {
    std::lock_guard<std::mutex> lock(g_state.sampler.events.mutex);
    count_interruption(g_state.sampler.events.part);
  }
  switch (signal_thread(st, pid, tid, kind)) {
    case Sent::yes: return true;
    case Sent::no: record_send_failure(st, Reason::signal_coalesced); return false;
    case Sent::gone: record_send_failure(st, Reason::thread_gone); return false;
  }
  return false;
}

// Waits until the handler of the signal just sent (kSentHold) has published its registers:
// true, the thread is held. False when it has not taken the signal within 100 ms (a thread
// off its core on a busy machine) or sampling stops first: the signal is withdrawn, and
// its handler, when it runs, leaves no trace. A handler that has taken it publishes
// without waiting for anything, so it is waited for to the end.
bool await_published(ThreadSampling* st) {
  uint64_t give_up = now_ns() + kHoldWaitNs;
  while (st->handshake.load(std::memory_order_acquire) != ThreadSampling::kPublished) {
    sched_yield();
    if (now_ns() > give_up || !g_state.signals.running.load(std::memory_order_acquire)) {
      int sent = ThreadSampling::kSentHold;
      if (st->signal.compare_exchange_strong(sent, ThreadSampling::kWithdrawn, std::memory_order_acq_rel))
        return false;
    }
  }
  return true;
}

// Signal the thread, wait until its handler has published its registers, walk it
// (classical) and build its request here, arm its poll, and let it go.
void held_sample(ThreadSampling* st, pid_t pid, int tid) {
  runtime::Thread* t = st->thread;
  if (!send_signal(st, pid, tid, ThreadSampling::kSentHold)) return;
  if (!await_published(st)) {
    record_send_failure(st, Reason::hold_timed_out);
    return;
  }
  // The thread is held: its frames stay put while we read them.
  bool classical = g_state.plan().wants(SamplerId::classical);
  WalkResult walk;
  if (classical) {
    BufferSink sink(g_state.sampler.classical_frames);
    walk = walk_interrupted(SamplerId::classical, t, st->regs, st->regs_in_java, sink);
  }
  SampleRequest r;
  if (g_state.plan().want_request) r = request_for(st->regs, st->regs_in_java);
  uint64_t id = g_state.signals.next_sample.fetch_add(1, std::memory_order_relaxed);
  uint64_t ticks = st->handler_entry_ns;
  uint64_t held = now_ns() - ticks;
  if (g_state.plan().want_request) push_request(t, st, r, id, ticks, st->handler_entry_cpu_ns, held);
  WalkRecord pending[kHandlerWalks];
  int pending_count = st->pending_count;
  for (int i = 0; i < pending_count; i++) pending[i] = st->pending[i];
  uint64_t cursor = st->pending_cursor;
  MVM_ASSERT(st->handshake.load(std::memory_order_acquire) == ThreadSampling::kPublished,
             "only the sampler thread lets a held handler go, once");
  st->handshake.store(ThreadSampling::kIdle, std::memory_order_release);
  // The handler wrote the arena before publishing and will not touch it again until the
  // next interruption, which only this thread sends.
  push_walks(st, pending, pending_count, id, ticks, held, cursor);
  if (classical) {
    StackTrace trace;
    if (!walk.failure)
      for (const CompactFrame& f : g_state.sampler.classical_frames) trace.push_back(frame_ref(f));
    record_walk(SamplerId::classical, walk.failure, walk.biased, trace, walk.truncated, walk.freed_code, id, ticks,
                held, st->thread_id);
  }
}

// --native-frames: the C/C++ frames of a thread in native code, walked by its own handler
// from the interrupted context while this thread waits for it (the context only the
// thread's signal gives). True with the thread held in its handler (release it with
// release_native), where it cannot return to Java: its Mini frames stay put. No signal is
// sent while an earlier one is still pending.
bool hold_for_native_walk(ThreadSampling* st, pid_t pid, int tid) {
  st->native->handler_walk = jit::NativeWalk{};
  return signal_thread(st, pid, tid, ThreadSampling::kSentHold, /*while_in_handler=*/true) == Sent::yes &&
         await_published(st);
}

void release_native(ThreadSampling* st) {
  MVM_ASSERT(st->handshake.load(std::memory_order_acquire) == ThreadSampling::kPublished,
             "only the sampler thread lets a held handler go, once");
  st->handshake.store(ThreadSampling::kIdle, std::memory_order_release);
}

// A thread in native code is not signalled for its Mini stack (JDK-8245772): the sampler
// walks it from the anchor while the thread is kept from returning to Java (its
// transition back waits while walk_in_progress is set), and records a NativeMethodSample:
// the builtin it is in (a native frame) over the frames from the anchor. With
// --native-frames the C/C++ frames the handler walked are merged in: what the builtin
// called above it, the thread's start below. False, with nothing counted, when the thread
// got back to Java before it could be walked.
bool sample_native(ThreadSampling* st, pid_t pid, int tid) {
  runtime::Thread* t = st->thread;
  uint64_t start = now_ns();
  // Held in its handler (mixed stacks), or kept from returning to Java while walked (its
  // transition back waits then, which a handler's walk would see: never both).
  bool held = st->native != nullptr && hold_for_native_walk(st, pid, tid);
  if (held && (st->regs_in_java || t->get_state() != runtime::ThreadState::in_native)) {  // it got back first
    release_native(st);
    return false;
  }
  if (!held) {
    t->walk_in_progress.store(true, std::memory_order_seq_cst);
    if (t->get_state() != runtime::ThreadState::in_native) {  // it got back first
      t->walk_in_progress.store(false, std::memory_order_release);
      return false;
    }
  }
  // The builtin over the frames from the anchor, cut at the depth limit (the builtin counts).
  const uint32_t limit = g_state.plan().options.stack_depth;
  CompactTrace trace;
  bool cut = false;
  runtime::StackWalker walker(t);
  for (runtime::Frame f; walker.next(f);) {
    if (trace.empty()) trace.push_back(CompactFrame{f.method, nullptr, f.bci, FrameKind::native});
    if (trace.size() == limit) {
      cut = true;
      break;
    }
    trace.push_back(compact_frame(f));
  }
  std::optional<Reason> failure;
  if (st->native != nullptr) {
    const NativeWalkBuffers& nb = *st->native;
    if (!held || nb.handler_walk.end != jit::WalkEnd::end_of_stack) {
      failure = Reason::native_walk_failed;
    } else {
      CompactTrace native(nb.handler_walk.count), mixed;
      native.resize(classify(nb.handler, nb.handler_walk.count, true, native.data()));
      size_t mini = physical_frames(trace) - (trace.empty() ? 0 : 1);  // the native frame is not one
      if (cut) native.resize(through_top_markers(native, mini));
      failure = interleave(native, trace, mini, mini, /*native_on_top=*/true, mixed);
      trace = std::move(mixed);
    }
  }
  if (held)
    release_native(st);
  else
    t->walk_in_progress.store(false, std::memory_order_release);
  uint64_t held_ns = now_ns() - start;
  uint64_t id = g_state.signals.next_sample.fetch_add(1, std::memory_order_relaxed);
  EventBuffer& b = g_state.sampler.events;
  std::lock_guard<std::mutex> lock(b.mutex);
  count_interruption(b.part);
  if (failure)
    record_failure_all(b, *failure, id, start, st->thread_id);
  else
    record_native(b, id, start, held_ns, st->thread_id, b.part.stacks.intern(named(trace), cut), cut);
  return true;
}

// A period's time came: `missed` more came and went while this thread was busy with
// earlier visits, and `visits` threads are due now (and were due in each missed one).
void count_period(uint64_t missed, size_t visits) {
  std::lock_guard<std::mutex> own(g_state.sampler.events.mutex);
  Profile::Schedule& s = g_state.sampler.events.part.schedule;
  s.periods += 1 + missed;
  s.periods_missed += missed;
  s.visits_due += visits * (1 + missed);
  s.visits_missed += visits * missed;
}

}  // namespace

void drain_walks(ThreadSampling* st) {
  if (st->left_out.size() > 0) {
    std::lock_guard<std::mutex> lock(g_state.sampler.events.mutex);
    ThreadSampling::LeftOut l;
    while (st->left_out.pop(l)) record_left_out(g_state.sampler.events, l.id, l.ticks, st->thread_id, l.walk);
  }
  WalkRecord w;
  StackTrace trace;
  CompactTrace mini, native, mixed;
  if (st->walks == nullptr) return;
  const FrameArena& arena = st->walks->arena;
  while (st->walks->records.pop(w)) {
    trace.clear();
    mini.clear();
    native.clear();
    for (uint32_t i = 0; i < w.count; i++) mini.push_back(arena.at(w.begin + i));
    for (uint32_t i = 0; i < w.native_count; i++) native.push_back(arena.at(w.begin + w.count + i));
    st->walks->arena.release_to(w.begin + w.count + w.native_count);
    std::optional<Reason> failure = w.failure;
    if (!failure && st->native != nullptr) {
      // The handler's libunwind walk around the Mini frames (sampler/mixed_stack.h).
      size_t physical = physical_frames(mini);
      if (w.truncated) native.resize(through_top_markers(native, physical));
      failure = w.native_failed ? std::optional<Reason>(Reason::native_walk_failed)
                                : interleave(native, mini, physical, physical, false, mixed);
      if (!failure) mini.swap(mixed);
    }
    if (!failure) trace = named(mini);
    record_walk(w.sampler, failure, w.biased, trace, w.truncated, w.freed_code, w.id, w.ticks, w.held_ns,
                st->thread_id);
  }
}

// Before the sampler thread takes the registry's mutex: a dump or the .jsonl flush
// waiting for it goes first (std::mutex is not fair, and a sampler behind its periods
// takes it again at once: they could wait for ever).
namespace {
void let_others_in() {
  while (g_state.threads.waiters.load(std::memory_order_acquire) > 0) sched_yield();
}
}  // namespace

void drain_all_walks() {
  let_others_in();
  std::lock_guard<std::mutex> lock(g_state.threads.mutex);
  for (ThreadSampling* st : live_threads()) drain_walks(st);
}

namespace {
// The time to the next period. Under --interval-jitter it is drawn uniformly from
// interval * (1 +- jitter), so that a program whose own rhythm is near the interval is not
// always caught at the same phase of it (random sampling, as Mytkowicz et al. ask for);
// the mean, and so the rate asked, stays the interval.
class IntervalDraw {
 public:
  explicit IntervalDraw(const ProfilerOptions& o)
      : rng_(now_ns() ^ (uint64_t(getpid()) << 32)),
        draw_(uint64_t(double(o.interval_ns) * (1 - o.interval_jitter)),
              uint64_t(double(o.interval_ns) * (1 + o.interval_jitter))) {}
  uint64_t next() { return draw_(rng_); }

 private:
  std::mt19937_64 rng_;
  std::uniform_int_distribution<uint64_t> draw_;
};
}  // namespace

void sampler_loop() {
  size_t next = 0;
  uint64_t deadline = now_ns();
  pid_t pid = getpid();
  IntervalDraw interval(g_state.plan().options);
  g_state.sampler.classical_frames.reserve(kGuessDepthLimit);
  // One CPU-clock read per visit (it is a system call, not a vDSO read): a visit is
  // charged the sampler thread's CPU since the previous visit ended, which also holds
  // the period's wake-up and its recording of the handlers' walks.
  uint64_t cpu = thread_cpu_ns();
  // -d/--duration: no period starts after this; the program runs on unsampled.
  uint64_t duration = g_state.plan().options.duration_ns;
  uint64_t sampling_ends = duration > 0 ? g_state.plan().start_ns + duration : UINT64_MAX;
  auto stopped = [] { return !g_state.signals.running.load(std::memory_order_acquire); };
  while (g_state.signals.running.load(std::memory_order_acquire)) {
    deadline += interval.next();
    if (deadline >= sampling_ends) {
      std::unique_lock<std::mutex> wait(g_state.sampler.wake_mutex);
      g_state.sampler.wake.wait(wait, stopped);
      break;
    }
    uint64_t now = now_ns();
    uint64_t missed = 0;
    if (deadline > now) {
      std::unique_lock<std::mutex> wait(g_state.sampler.wake_mutex);
      if (g_state.sampler.wake.wait_for(wait, std::chrono::nanoseconds(deadline - now), stopped)) break;
    } else {
      // Fell behind: the periods whose time passed meanwhile are missed, not made up in a
      // burst.
      missed = (now - deadline) / g_state.plan().options.interval_ns;
      deadline = now;
    }
    uint64_t period_start = now_ns();
    if (g_state.plan().want_handler_walks || g_state.plan().want_request) drain_all_walks();
    // The live threads only; a thread that ends waits for this period's visits before
    // its state is freed.
    let_others_in();
    std::lock_guard<std::mutex> lock(g_state.threads.mutex);
    const std::vector<ThreadSampling*>& threads = live_threads();
    size_t visits = std::min(threads.size(), g_state.plan().options.threads_per_period);
    count_period(missed, visits);
    if (threads.empty()) continue;
    // Stopping does not wait for the rest of the period's visits, nor does anyone wait for
    // more than about kHoldWaitNs of them (each hold may wait for its thread, and a
    // thousand threads on two cores take long to get a core): the rest are the next
    // period's.
    uint64_t visits_end = now_ns() + kHoldWaitNs;
    size_t i = 0;
    for (; i < visits && g_state.signals.running.load(std::memory_order_acquire) && (i == 0 || now_ns() < visits_end); i++) {
      ThreadSampling* st = threads[(next + i) % threads.size()];
      runtime::Thread* t = st->thread;
      int tid = t->tid.load(std::memory_order_acquire);
      runtime::ThreadState state = t->get_state();
      // in_vm and blocked threads are not sampled: not running Mini code, not in a native.
      bool running = tid != 0 && (state == runtime::ThreadState::in_java || state == runtime::ThreadState::in_native);
      if (running && state == runtime::ThreadState::in_java && g_state.plan().hold)
        held_sample(st, pid, tid);
      else if (running && state == runtime::ThreadState::in_java)
        send_signal(st, pid, tid, ThreadSampling::kSent);
      else if (running)
        running = sample_native(st, pid, tid);
      std::lock_guard<std::mutex> own(g_state.sampler.events.mutex);
      if (!running) {
        g_state.sampler.events.part.schedule.not_running++;
        continue;
      }
      uint64_t after = thread_cpu_ns();
      g_state.sampler.events.part.sampler_cpu_ns.push_back(after - cpu);
      g_state.sampler.events.part.sampler_thread_cpu_ns = after;
      cpu = after;
    }
    next = (next + i) % threads.size();
    std::lock_guard<std::mutex> own(g_state.sampler.events.mutex);
    // Visits the period was cut short of are missed like those of a missed period.
    g_state.sampler.events.part.schedule.visits_missed += visits - i;
    g_state.sampler.events.part.schedule.period_ns.push_back(now_ns() - period_start);
  }
  std::lock_guard<std::mutex> own(g_state.sampler.events.mutex);
  g_state.sampler.events.part.sampler_thread_cpu_ns = thread_cpu_ns();
}

}  // namespace sampler
