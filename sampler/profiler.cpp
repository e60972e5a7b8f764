#include "sampler/profiler.h"

#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "runtime/compiled_code.h"
#include "runtime/errors.h"
#include "runtime/poll.h"
#include "runtime/stack_walker.h"
#include "runtime/thread.h"
#include "runtime/vm.h"
#include "sampler/context_walk.h"
#include "sampler/frame_arena.h"
#include "sampler/reconstruct.h"
#include "sampler/report.h"
#include "sampler/sample_request.h"
#include "sampler/spsc_ring.h"
#include "vm/builtins.h"
#include "vm/opcodes.h"

namespace sampler {

namespace {

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

enum SamplerId : uint8_t { kCooperative, kClassical, kAsync, kSafepoint, kOracle, kSamplerCount };
const char* const kSamplerNames[kSamplerCount] = {"cooperative", "classical", "async", "safepoint", "oracle"};

// What a walk at the interruption (async, oracle) produced, waiting in the thread's walk
// ring for the sampler thread to record it; its frames are in the thread's arena.
struct WalkRecord {
  uint64_t id = 0, ticks = 0, held_ns = 0;
  SamplerId sampler = kAsync;
  const char* failure = nullptr;
  uint64_t begin = 0;
  uint32_t count = 0;
  bool truncated = false;
};

// A recording thread's own events (JFR's thread-local buffers): its interned stacks,
// events and counters, merged into the profile at exit. The owner takes the mutex for
// each record and the merge at exit takes it once, so while the program runs it is never
// contended and no thread waits for another to record. Never touched by a handler.
struct CompactTraceHash {
  size_t operator()(const CompactTrace& t) const {
    uint64_t h = 1469598103934665603ull ^ t.size();
    for (const CompactFrame& f : t) {
      uint64_t v = reinterpret_cast<uintptr_t>(f.method) ^ reinterpret_cast<uintptr_t>(f.stub) ^
                   (uint64_t(uint32_t(f.bci)) << 40) ^ (uint64_t(f.kind) << 60);
      h = (h ^ v) * 1099511628211ull;
    }
    return size_t(h);
  }
};

struct EventBuffer {
  std::mutex mutex;
  Profile part;  // stacks, events and stats only
  // A Mini thread's buffer interns the traces its polls build in compact form, and its
  // events' stack ids index `compact` (named once per distinct trace at the merge); the
  // sampler thread's buffer interns named traces in part.stacks.
  bool compact_stacks = false;
  std::vector<CompactTrace> compact;
  std::unordered_map<CompactTrace, uint32_t, CompactTraceHash> compact_ids;
  uint32_t intern(const CompactTrace& t) {
    auto [it, fresh] = compact_ids.try_emplace(t, uint32_t(compact.size()));
    if (fresh) compact.push_back(t);
    return it->second;
  }
};

// Per Mini thread: the ring the handler fills and the poll drains (cooperative,
// safepoint), the walks the handler made (async, oracle) and what it had to count.
struct ThreadState {
  SpscRing<SampleRequest, 256> ring;
  SpscRing<WalkRecord, 512> walks;
  FrameArena<32768> arena;
  // Holding the thread (--suspend=handshake, and always for classical, which walks a
  // suspended thread): the sampler asks (kAsked), the handler publishes its registers
  // (kPublished) and waits, the sampler does its part and lets it go (kResume); the
  // handler then returns (kIdle).
  enum : int { kIdle, kAsked, kPublished, kResume };
  std::atomic<int> handshake{kIdle};
  Registers regs{};
  bool regs_in_java = false;
  uint64_t handler_entry_ns = 0;
  WalkRecord pending[2];  // the handler's walks while held, pushed by the sampler
  int pending_count = 0;
  uint64_t pending_cursor = 0;
  std::atomic<uint64_t> ring_full{0};
  std::atomic<uint64_t> walks_full[kSamplerCount] = {};
  int thread_id = 0;
  EventBuffer events;  // what this thread records at its polls (compact stacks)
  ThreadState() { events.compact_stacks = true; }
};

ProfilerOptions g_options;
std::atomic<bool> g_running{false};
std::atomic<uint64_t> g_next_sample{1};
std::atomic<uint64_t> g_orphan_signals{0};  // landed on no Mini thread (it had ended)
std::mutex g_states_mutex;                  // guards g_states
std::vector<ThreadState*> g_states;
EventBuffer g_sampler_events;               // what the sampler thread records (classical, async, oracle, native)
Profile g_profile;                          // the merged profile, built at exit
std::thread g_sampler_thread;
bool g_want[kSamplerCount] = {};
bool g_want_request = false;  // cooperative or safepoint: a request served at the poll
bool g_hold = false;          // the handler waits for the sampler thread

// Frames of a walk into the thread's arena.
class ArenaSink : public FrameSink {
 public:
  ArenaSink(ThreadState* st, uint64_t& cursor) : st_(st), cursor_(cursor) {}
  bool put(const CompactFrame& f) override { return st_->arena.put(cursor_, f); }

 private:
  ThreadState* st_;
  uint64_t& cursor_;
};

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

Registers registers_of(const ucontext_t* uc) {
  const greg_t* g = uc->uc_mcontext.gregs;
  return Registers{uintptr_t(g[REG_RIP]), uintptr_t(g[REG_RSP]), uintptr_t(g[REG_RBP]),
                   uintptr_t(g[REG_RBX]), uintptr_t(g[REG_R13]), uintptr_t(g[REG_RAX]),
                   uintptr_t(g[REG_RCX]), uintptr_t(g[REG_RDX]), uintptr_t(g[REG_R14])};
}

// The async and oracle walks at the interruption (in the handler), into the arena.
// Returns how many records it filled.
int walk_in_handler(runtime::Thread* t, ThreadState* st, const Registers& regs, bool in_java, uint64_t& cursor,
                    WalkRecord out[2]) {
  int n = 0;
  for (SamplerId id : {kAsync, kOracle}) {
    if (!g_want[id]) continue;
    WalkRecord& w = out[n++];
    w = WalkRecord{};
    w.sampler = id;
    w.begin = cursor;
    if (!in_java) {
      w.failure = "not_in_java";
      continue;
    }
    ArenaSink sink(st, cursor);
    WalkResult r = walk_protected(id == kOracle, t, regs, sink);
    w.failure = r.failure;
    w.truncated = r.truncated;
    if (r.failure != nullptr) cursor = w.begin;  // a failed walk keeps no frames
    w.count = r.failure != nullptr ? 0 : r.depth;
  }
  return n;
}

void push_walks(ThreadState* st, WalkRecord* recs, int n, uint64_t id, uint64_t ticks, uint64_t held, uint64_t cursor) {
  st->arena.commit(cursor);
  for (int i = 0; i < n; i++) {
    recs[i].id = id;
    recs[i].ticks = ticks;
    recs[i].held_ns = held;
    if (!st->walks.push(recs[i])) st->walks_full[recs[i].sampler].fetch_add(1, std::memory_order_relaxed);
  }
}

void push_request(runtime::Thread* t, ThreadState* st, const SampleRequest& r) {
  if (st->ring.push(r))
    runtime::arm_poll(t);  // served at the thread's next poll
  else
    st->ring_full.fetch_add(1, std::memory_order_relaxed);
}

// --- the interruption ---------------------------------------------------------------

void on_sigprof(int, siginfo_t*, void* context) {
  int saved_errno = errno;
  uint64_t start = now_ns();
  runtime::Thread* t = runtime::Thread::current();
  auto* st = t != nullptr ? static_cast<ThreadState*>(t->sampler_state.load(std::memory_order_acquire)) : nullptr;
  if (st == nullptr) {
    g_orphan_signals.fetch_add(1, std::memory_order_relaxed);
    errno = saved_errno;
    return;
  }
  auto* uc = static_cast<ucontext_t*>(context);
  Registers regs = registers_of(uc);
  // The thread may have left Java between the sampler's look and the signal: nothing to
  // sample, but the interruption is reported (a FailedSample for every sampler).
  bool in_java = t->get_state() == runtime::ThreadState::in_java;
  if (g_hold) {
    // JEP 518's handshake (and JFR's classical suspension): publish the context and wait
    // while the sampler thread does its part.
    int asked = ThreadState::kAsked;
    if (!st->handshake.compare_exchange_strong(asked, ThreadState::kAsked)) {
      // Not (or no longer) asked: the sampler gave up waiting for this signal.
      g_orphan_signals.fetch_add(1, std::memory_order_relaxed);
      errno = saved_errno;
      return;
    }
    st->regs = regs;
    st->regs_in_java = in_java;
    st->handler_entry_ns = start;
    st->pending_cursor = st->arena.cursor();
    st->pending_count = walk_in_handler(t, st, regs, in_java, st->pending_cursor, st->pending);
    st->handshake.store(ThreadState::kPublished, std::memory_order_release);
    // sched_yield is async-signal-safe; on a machine with fewer cores than threads the
    // sampler thread needs the core to finish the request.
    while (st->handshake.load(std::memory_order_acquire) != ThreadState::kResume) sched_yield();
    st->handshake.store(ThreadState::kIdle, std::memory_order_release);
    errno = saved_errno;
    return;
  }
  uint64_t cursor = st->arena.cursor();
  WalkRecord recs[2];
  int n = walk_in_handler(t, st, regs, in_java, cursor, recs);
  SampleRequest r;
  if (g_want_request) {
    if (!in_java) {
      r.kind = RequestKind::failed;
      r.reason = "not_in_java";
    } else {
      r = build_request(regs, g_options.stub_metadata);
    }
  }
  uint64_t id = g_next_sample.fetch_add(1, std::memory_order_relaxed);
  uint64_t held = now_ns() - start;
  push_walks(st, recs, n, id, start, held, cursor);
  if (g_want_request) {
    r.id = id;
    r.ticks = start;
    r.held_ns = held;
    push_request(t, st, r);
  }
  errno = saved_errno;
}

// An event's common fields: which method, which interruption, which thread, when.
Event event(EventType type, const char* sampler, uint64_t id, int thread, uint64_t ticks) {
  Event e;
  e.type = type;
  e.sampler = sampler;
  e.sample = id;
  e.thread = thread;
  e.time_ns = ticks;
  return e;
}

// --- threads in native code ----------------------------------------------------------

// The builtin a native-state thread is in: the instruction at its anchor frame's bcp.
std::string native_name(const runtime::Frame& top) {
  const uint8_t* p = top.method->code + top.bci;
  switch (vm::Op(*p)) {
    case vm::Op::native: return std::string(vm::native_info(vm::NativeId(vm::read_u16(p, vm::kOperandA))).name);
    case vm::Op::print: return "print";
    default: return std::string(vm::op_info(vm::Op(*p)).name);
  }
}

// A thread in native code is not signalled (JDK-8245772): the sampler walks its stack
// from the anchor while the thread is kept from returning to Java (its transition back
// waits while walk_in_progress is set), and records a NativeMethodSample.
void sample_native(runtime::Thread* t) {
  uint64_t start = now_ns();
  t->walk_in_progress.store(true, std::memory_order_seq_cst);
  if (t->get_state() != runtime::ThreadState::in_native) {  // it got back first
    t->walk_in_progress.store(false, std::memory_order_release);
    return;
  }
  std::vector<runtime::Frame> frames;
  runtime::StackWalker w(t);
  runtime::Frame f;
  while (w.next(f)) frames.push_back(f);
  t->walk_in_progress.store(false, std::memory_order_release);
  uint64_t held = now_ns() - start;
  auto* st = static_cast<ThreadState*>(t->sampler_state.load(std::memory_order_acquire));
  StackTrace trace;
  if (!frames.empty()) {
    FrameRef top;
    top.function = native_name(frames[0]);
    top.kind = FrameKind::native;
    trace.push_back(top);
  }
  StackTrace rest = to_trace(frames, 0);
  trace.insert(trace.end(), rest.begin(), rest.end());
  uint64_t id = g_next_sample.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(g_sampler_events.mutex);
  Profile& p = g_sampler_events.part;
  uint32_t stack = p.stacks.intern(trace);
  for (const std::string& name : g_options.samplers) {
    SamplerStats& s = p.stats[name];
    s.interruptions++;
    s.samples++;
    s.suspension_ns.push_back(held);
    Event e = event(EventType::NativeMethodSample, name.c_str(), id, st != nullptr ? st->thread_id : t->id, start);
    e.stack = stack;
    p.events.push_back(e);
  }
}

// --- recording (into an event buffer's part, under its mutex) -----------------------

void record_sample(Profile& p, SamplerId sampler, uint64_t id, uint64_t ticks, uint64_t held, int thread, uint32_t stack,
                   bool biased, const char* reason, bool truncated) {
  SamplerStats& s = p.stats[kSamplerNames[sampler]];
  s.interruptions++;
  s.samples++;
  s.suspension_ns.push_back(held);
  if (truncated) s.truncated++;
  Event e = event(EventType::ExecutionSample, kSamplerNames[sampler], id, thread, ticks);
  e.biased = biased;
  if (biased) {
    e.reason = reason;
    s.biased[reason]++;
  }
  e.stack = stack;
  p.events.push_back(e);
}

void record_latency(Profile& p, const SampleRequest& r, int thread, uint32_t stack, uint64_t served_ns) {
  SamplerStats& s = p.stats[kSamplerNames[kCooperative]];
  Event l = event(EventType::SafepointLatency, kSamplerNames[kCooperative], r.id, thread, r.ticks);
  l.latency_ns = served_ns - r.ticks;
  l.stack = stack;
  s.latency_ns.push_back(l.latency_ns);
  p.events.push_back(l);
}

// A failed interruption for one sampler, with a FailedSample event when its id is known.
void record_failure(Profile& p, SamplerId sampler, const char* reason, uint64_t id, uint64_t ticks, int thread) {
  SamplerStats& s = p.stats[kSamplerNames[sampler]];
  s.interruptions++;
  s.failed[reason]++;
  if (id == 0) return;
  Event e = event(EventType::FailedSample, kSamplerNames[sampler], id, thread, ticks);
  e.reason = reason;
  p.events.push_back(e);
}
// For the samplers served at the poll (cooperative, safepoint).
void record_request_failure(Profile& p, const char* reason, const SampleRequest* r, int thread) {
  for (SamplerId id : {kCooperative, kSafepoint})
    if (g_want[id]) record_failure(p, id, reason, r ? r->id : 0, r ? r->ticks : 0, thread);
}

// The sampler thread records the walks the handlers made.
void drain_walks(ThreadState* st) {
  WalkRecord w;
  StackTrace trace;
  while (st->walks.pop(w)) {
    trace.clear();
    for (uint32_t i = 0; i < w.count; i++) trace.push_back(frame_ref(st->arena.at(w.begin + i)));
    st->arena.release_to(w.begin + w.count);
    std::lock_guard<std::mutex> lock(g_sampler_events.mutex);
    Profile& p = g_sampler_events.part;
    if (w.failure != nullptr)
      record_failure(p, w.sampler, w.failure, w.id, w.ticks, st->thread_id);
    else
      record_sample(p, w.sampler, w.id, w.ticks, w.held_ns, st->thread_id, p.stacks.intern(trace), false, nullptr, w.truncated);
  }
}

// --- holding the thread (--suspend=handshake, classical) ----------------------------

std::vector<CompactFrame> g_classical_frames;  // the sampler thread's pre-allocated buffer
std::vector<uint64_t> g_visit_cpu_ns;          // the sampler thread's CPU per visit (its own)
uint64_t g_sampler_total_cpu_ns = 0;

uint64_t thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// Signal the thread, wait until its handler has published its registers, walk it
// (classical) and build its request here, arm its poll, and let it go.
void held_sample(runtime::Thread* t, pid_t pid, int tid) {
  auto* st = static_cast<ThreadState*>(t->sampler_state.load(std::memory_order_acquire));
  if (st == nullptr) return;
  st->handshake.store(ThreadState::kAsked, std::memory_order_release);
  if (syscall(SYS_tgkill, pid, tid, SIGPROF) != 0) {
    st->handshake.store(ThreadState::kIdle, std::memory_order_release);
    return;
  }
  uint64_t give_up = now_ns() + 100'000'000;  // a thread that exits never answers
  while (st->handshake.load(std::memory_order_acquire) != ThreadState::kPublished) {
    sched_yield();
    if (now_ns() > give_up) {
      int asked = ThreadState::kAsked;
      if (st->handshake.compare_exchange_strong(asked, ThreadState::kIdle)) return;  // withdrawn
    }
  }
  // The thread is held: its frames stay put while we read them.
  WalkResult classical;
  if (g_want[kClassical]) {
    if (!st->regs_in_java) {
      classical.failure = "not_in_java";
    } else {
      BufferSink sink(g_classical_frames);
      classical = walk_protected(false, t, st->regs, sink);
    }
  }
  SampleRequest r;
  if (g_want_request) {
    if (!st->regs_in_java) {
      r.kind = RequestKind::failed;
      r.reason = "not_in_java";
    } else {
      r = build_request(st->regs, g_options.stub_metadata);
    }
  }
  uint64_t id = g_next_sample.fetch_add(1, std::memory_order_relaxed);
  uint64_t ticks = st->handler_entry_ns;
  uint64_t held = now_ns() - ticks;
  if (g_want_request) {
    r.id = id;
    r.ticks = ticks;
    r.held_ns = held;
    push_request(t, st, r);
  }
  WalkRecord pending[2];
  int pending_count = st->pending_count;
  for (int i = 0; i < pending_count; i++) pending[i] = st->pending[i];
  uint64_t cursor = st->pending_cursor;
  st->handshake.store(ThreadState::kResume, std::memory_order_release);
  // The handler wrote the arena before publishing and will not touch it again until the
  // next interruption, which only this thread sends.
  push_walks(st, pending, pending_count, id, ticks, held, cursor);
  if (g_want[kClassical]) {
    StackTrace trace;
    if (classical.failure == nullptr)
      for (const CompactFrame& f : g_classical_frames) trace.push_back(frame_ref(f));
    std::lock_guard<std::mutex> lock(g_sampler_events.mutex);
    Profile& p = g_sampler_events.part;
    if (classical.failure != nullptr)
      record_failure(p, kClassical, classical.failure, id, ticks, st->thread_id);
    else
      record_sample(p, kClassical, id, ticks, held, st->thread_id, p.stacks.intern(trace), false, nullptr, classical.truncated);
  }
  // Wait for the handler to leave before the next handshake can reuse the slot.
  while (st->handshake.load(std::memory_order_acquire) == ThreadState::kResume) sched_yield();
}

// --- the sampler thread -------------------------------------------------------------

void drain_all_walks() {
  std::vector<ThreadState*> states;
  {
    std::lock_guard<std::mutex> lock(g_states_mutex);
    states = g_states;
  }
  for (ThreadState* st : states) drain_walks(st);
}

void sampler_loop() {
  size_t next = 0;
  uint64_t deadline = now_ns();
  pid_t pid = getpid();
  g_classical_frames.reserve(kGuessDepthLimit);
  while (g_running.load(std::memory_order_acquire)) {
    deadline += g_options.interval_ns;
    uint64_t now = now_ns();
    if (deadline > now) {
      timespec ts{time_t((deadline - now) / 1000000000u), long((deadline - now) % 1000000000u)};
      nanosleep(&ts, nullptr);
    } else {
      deadline = now;  // fell behind: do not burst
    }
    if (g_want[kAsync] || g_want[kOracle]) drain_all_walks();
    std::vector<runtime::Thread*> threads = runtime::VM::get().threads();
    if (threads.empty()) continue;
    size_t visits = std::min(threads.size(), g_options.threads_per_period);
    for (size_t i = 0; i < visits; i++) {
      runtime::Thread* t = threads[(next + i) % threads.size()];
      int tid = t->tid.load(std::memory_order_acquire);
      if (tid == 0) continue;
      runtime::ThreadState state = t->get_state();
      if (state != runtime::ThreadState::in_java && state != runtime::ThreadState::in_native)
        continue;  // in_vm and blocked threads are not sampled: not running Mini code, not in a native
      uint64_t cpu = thread_cpu_ns();
      if (state == runtime::ThreadState::in_java && g_hold)
        held_sample(t, pid, tid);
      else if (state == runtime::ThreadState::in_java)
        syscall(SYS_tgkill, pid, tid, SIGPROF);
      else
        sample_native(t);
      g_visit_cpu_ns.push_back(thread_cpu_ns() - cpu);
    }
    next = (next + visits) % threads.size();
  }
  g_sampler_total_cpu_ns = thread_cpu_ns();
}

// --- the poll: cooperative reconstruction (JEP 518) ---------------------------------

class CooperativeClient : public runtime::PollClient {
 public:
  void on_poll(runtime::Thread* t) override {
    auto* st = static_cast<ThreadState*>(t->sampler_state.load(std::memory_order_acquire));
    if (st == nullptr) return;
    SampleRequest r;
    bool walked = false;
    std::vector<runtime::Frame> frames;
    while (st->ring.pop(r)) {
      if (!walked) {
        runtime::StackWalker w(t);
        runtime::Frame f;
        while (w.next(f)) frames.push_back(f);
        walked = true;
      }
      uint64_t served = now_ns();
      Profile& p = st->events.part;
      if (r.kind == RequestKind::failed) {
        std::lock_guard<std::mutex> lock(st->events.mutex);
        record_request_failure(p, r.reason, &r, st->thread_id);
        continue;
      }
      // Compact traces (Method*, bci): hashed and interned without a string in sight.
      CompactTrace trace;
      const char* failure = g_want[kCooperative] ? reconstruct(r, frames, trace) : nullptr;
      std::lock_guard<std::mutex> lock(st->events.mutex);  // its own: uncontended
      uint32_t poll_site = (g_want[kSafepoint] || failure != nullptr) ? st->events.intern(compact_trace(frames, 0)) : 0;
      if (g_want[kCooperative]) {
        uint32_t used = failure != nullptr ? poll_site : st->events.intern(trace);
        record_sample(p, kCooperative, r.id, r.ticks, r.held_ns, st->thread_id, used, failure != nullptr, failure, false);
        record_latency(p, r, st->thread_id, used, served);
      }
      if (g_want[kSafepoint])
        record_sample(p, kSafepoint, r.id, r.ticks, r.held_ns, st->thread_id, poll_site, false, nullptr, false);
    }
  }
};
CooperativeClient g_client;


void on_thread(runtime::Thread* t, bool starting) {
  if (starting) {
    auto* st = new ThreadState();  // lives to the end: the final accounting reads it
    st->thread_id = t->id;
    {
      std::lock_guard<std::mutex> lock(g_states_mutex);
      g_states.push_back(st);
    }
    t->sampler_state.store(st, std::memory_order_release);
    return;
  }
  // The thread is ending: its last poll has run; what is still in its ring will never
  // be served there. (Signals are no longer sent: its tid is already cleared.)
  auto* st = static_cast<ThreadState*>(t->sampler_state.load(std::memory_order_acquire));
  if (st == nullptr) return;
  SampleRequest r;
  std::lock_guard<std::mutex> lock(st->events.mutex);
  while (st->ring.pop(r)) record_request_failure(st->events.part, "thread_ended_before_poll", &r, st->thread_id);
}

void merge_into(Profile& to, const EventBuffer& buf) {
  const Profile& from = buf.part;
  for (const auto& [name, s] : from.stats) {
    SamplerStats& t = to.stats[name];
    t.interruptions += s.interruptions;
    t.samples += s.samples;
    t.truncated += s.truncated;
    for (const auto& [r, n] : s.failed) t.failed[r] += n;
    for (const auto& [r, n] : s.biased) t.biased[r] += n;
    for (const auto& [r, n] : s.dropped) t.dropped[r] += n;
    t.suspension_ns.insert(t.suspension_ns.end(), s.suspension_ns.begin(), s.suspension_ns.end());
    t.latency_ns.insert(t.latency_ns.end(), s.latency_ns.begin(), s.latency_ns.end());
  }
  std::vector<int64_t> named_id(buf.compact.size(), -1);  // each compact trace named once
  for (Event e : from.events) {
    if (e.type != EventType::FailedSample) {
      if (!buf.compact_stacks) {
        e.stack = to.stacks.intern(from.stacks.get(e.stack));
      } else {
        if (named_id[e.stack] < 0) named_id[e.stack] = to.stacks.intern(named(buf.compact[e.stack]));
        e.stack = uint32_t(named_id[e.stack]);
      }
    }
    to.events.push_back(std::move(e));
  }
}

void exit_hook() { finish_profiler(); }

}  // namespace

bool parse_interval(const std::string& text, uint64_t& ns) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) i++;
  if (i == 0) return false;
  double v = std::strtod(text.substr(0, i).c_str(), nullptr);
  std::string unit = text.substr(i);
  double mult = unit == "us" ? 1e3 : unit == "ms" ? 1e6 : unit == "s" ? 1e9 : 0;
  if (mult == 0 || v <= 0) return false;
  ns = uint64_t(v * mult);
  return ns >= 10'000 && ns <= 10'000'000'000ull;  // 10 us .. 10 s
}

void start_profiler(const ProfilerOptions& options) {
  g_options = options;
  for (const std::string& s : options.samplers)
    for (int i = 0; i < kSamplerCount; i++)
      if (s == kSamplerNames[i]) g_want[i] = true;
  g_want_request = g_want[kCooperative] || g_want[kSafepoint];
  g_hold = options.handshake || g_want[kClassical];
  g_profile.samplers = options.samplers;
  g_profile.interval_ns = options.interval_ns;
  g_profile.program = runtime::VM::get().module().file;
  for (const std::string& s : options.samplers) g_profile.stats[s];
  struct sigaction sa = {};
  sa.sa_sigaction = on_sigprof;
  sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGPROF, &sa, nullptr);
  runtime::VM::get().set_thread_hook(&on_thread);
  runtime::register_poll_client(&g_client);
  runtime::add_exit_hook(&exit_hook);
  g_profile.duration_ns = now_ns();
  g_running.store(true, std::memory_order_release);
  g_sampler_thread = std::thread(sampler_loop);
}

void finish_profiler() {
  if (!g_running.exchange(false)) return;
  g_sampler_thread.join();
  // A handler that was already running finishes within microseconds; then record what
  // the handlers' walks left for the sampler thread.
  timespec settle{0, 2'000'000};
  nanosleep(&settle, nullptr);
  drain_all_walks();
  std::lock_guard<std::mutex> states_lock(g_states_mutex);
  // Merge every buffer into the profile: stacks re-interned in the one repository,
  // counters summed, events in time order.
  std::vector<EventBuffer*> buffers{&g_sampler_events};
  for (ThreadState* st : g_states) buffers.push_back(&st->events);
  for (EventBuffer* buf : buffers) {
    std::lock_guard<std::mutex> lock(buf->mutex);
    merge_into(g_profile, *buf);
    buf->part = Profile();
    buf->compact.clear();
    buf->compact_ids.clear();
  }
  std::stable_sort(g_profile.events.begin(), g_profile.events.end(),
                   [](const Event& a, const Event& b) { return a.time_ns < b.time_ns; });
  g_profile.duration_ns = now_ns() - g_profile.duration_ns;
  g_profile.sampler_cpu_ns = std::move(g_visit_cpu_ns);
  g_profile.sampler_thread_cpu_ns = g_sampler_total_cpu_ns;
  // Whatever the handlers counted, and requests still waiting in rings (a thread that
  // is still running when the program exits, e.g. after a runtime error elsewhere).
  for (ThreadState* st : g_states) {
    for (int i = 0; i < kSamplerCount; i++) {
      uint64_t full = (i == kCooperative || i == kSafepoint) ? st->ring_full.load() : st->walks_full[i].load();
      if (!g_want[i]) continue;
      g_profile.stats[kSamplerNames[i]].dropped["ring_full"] += full;
      g_profile.stats[kSamplerNames[i]].interruptions += full;
    }
    for (uint64_t left = st->ring.size(); left > 0; left--)
      record_request_failure(g_profile, "program_ended_before_poll", nullptr, st->thread_id);
  }
  for (uint64_t n = g_orphan_signals.load(); n > 0; n--)
    for (int i = 0; i < kSamplerCount; i++)
      if (g_want[i]) record_failure(g_profile, SamplerId(i), "thread_gone", 0, 0, 0);
  ReportOptions ro;
  ro.lines = g_options.lines;
  if (g_options.text_report) write_text(g_profile, std::cerr, ro);
  if (!g_options.out_path.empty()) {
    std::string error;
    if (!write_profile_file(g_profile, g_options.out_path, ro, error)) std::fprintf(stderr, "minivm: %s\n", error.c_str());
  }
  std::string stats_error;
  if (!g_options.stats_path.empty() && !write_stats_file(g_profile, g_options.stats_path, stats_error)) std::fprintf(stderr, "minivm: %s\n", stats_error.c_str());
  std::cerr.flush();
}

const Profile& current_profile() { return g_profile; }

}  // namespace sampler
