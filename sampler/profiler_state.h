// What the profiler's files share: the per-thread sampling state, the thread-local event
// buffers, the one ProfilerState, and the functions each file offers the others. Not for
// use outside sampler/ (the CLI uses profiler.h).
#pragma once
#include <signal.h>
#include <time.h>
#include <ucontext.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/code_unloading.h"
#include "runtime/gc.h"
#include "runtime/invariant.h"
#include "runtime/poll.h"
#include "runtime/thread.h"
#include "sampler/context_walk.h"
#include "sampler/event_stream.h"
#include "sampler/frame_arena.h"
#include "sampler/jfr_stream.h"
#include "sampler/mixed_stack.h"
#include "sampler/profile/profile.h"
#include "sampler/profiler.h"
#include "sampler/reconstruct.h"
#include "sampler/request_reservoir.h"
#include "sampler/sample_request.h"
#include "sampler/spsc_ring.h"

namespace sampler {

inline uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// The calling thread's time on a CPU so far (async-signal-safe, as clock_gettime is).
inline uint64_t thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// How many samplers walk in the signal handler: the records one interruption can leave.
constexpr size_t handler_walk_count() {
  size_t n = 0;
  for (StackTaken where : kSamplerStackTaken) n += where == StackTaken::in_handler;
  return n;
}
inline constexpr size_t kHandlerWalks = handler_walk_count();

// What a walk at the interruption (async, oracle) produced, waiting in the thread's walk
// ring for the sampler thread to record it; its frames are in the thread's arena.
struct WalkRecord {
  uint64_t id = 0, ticks = 0, held_ns = 0;
  SamplerId sampler = SamplerId::async;
  std::optional<Reason> failure;
  std::optional<Reason> biased = std::nullopt;  // WalkResult::biased
  uint64_t begin = 0;
  uint32_t count = 0;
  bool truncated = false;
  bool freed_code = false;  // WalkResult::freed_code
  // --native-frames: the handler's libunwind walk, classified, follows the walk's frames in
  // the arena (native_count frames), or could not be taken (native_failed).
  uint32_t native_count = 0;
  bool native_failed = false;
};

// --native-frames: a thread's buffers for libunwind walks, made when it starts. `handler`:
// its signal handler's walk from the interrupted context (for the in-handler samplers, and
// for a thread in native code, which the sampler thread holds for it), `classified` that
// walk's frames; `poll`: its own walk at a poll (grown when a stack does not fit). Each
// is used by one context at a time.
struct NativeWalkBuffers {
  jit::NativeFrame handler[kNativeWalkMax];
  jit::NativeWalk handler_walk;
  CompactFrame classified[kNativeWalkMax];
  std::vector<jit::NativeFrame> poll = std::vector<jit::NativeFrame>(256);
  // At a poll, the classified frames below the thread's bottom Mini frame (the call stub,
  // thread_main, the thread's start), from its first poll's walk (poll_client.cpp).
  CompactTrace poll_tail;
  bool poll_tail_known = false;
  // Each Mini stack's mixed stack over the tail (nodes of the thread's trace tree), and
  // the tail's own node.
  std::unordered_map<uint32_t, uint32_t> mixed_of;
  uint32_t tail_node = 0;
  std::vector<uint32_t> chain;  // scratch
};

// A Mini thread's stacks as a tree: each node a frame over its caller's node (node 0 is the
// empty stack), so a stack whose lower part is known (the frames a stack watermark kept,
// return_barrier.h) is interned with one lookup per frame above it. Each node remembers
// the callee last pushed over it, so a stack rebuilt just as it was (a recursion that
// unwinds and descends again between samples) is interned by one comparison per frame,
// with no hashing.
struct TraceNode {
  uint32_t caller;
  CompactFrame frame;
  uint32_t depth = 0;                // frames in the stack it ends (not part of its identity)
  bool truncated = false;            // the stack hangs from kCut (follows from `caller`)
  uint32_t last_callee = UINT32_MAX;  // a node over this one, the one pushed last (a memo)
};
struct TraceNodeHash {
  size_t operator()(const TraceNode& n) const;
};
struct TraceNodeEq {
  bool operator()(const TraceNode& a, const TraceNode& b) const { return a.caller == b.caller && a.frame == b.frame; }
};
//
// A stack cut at the depth limit hangs from its own root, kCut (no frame: it stands for
// the missing outermost callers), so that it is a different stack from the same frames
// complete, as in StackTraceRepository.
class TraceTree {
 public:
  static constexpr uint32_t kEmpty = 0;
  static constexpr uint32_t kCut = 1;
  TraceTree() : nodes_{TraceNode{kEmpty, CompactFrame{}}, TraceNode{kEmpty, CompactFrame{}, 0, true}} {}
  // The node of `frame` called from the stack `caller`.
  uint32_t push(uint32_t caller, const CompactFrame& frame);
  // A whole trace, top first.
  uint32_t intern(const CompactTrace& t, uint32_t below = kEmpty);
  // The trace of a node, top first (without the kCut root).
  CompactTrace trace(uint32_t node) const;
  // The stack `node` with at most `limit` frames: itself, or its top `limit` frames cut.
  uint32_t cut(uint32_t node, uint32_t limit);
  bool truncated(uint32_t node) const { return nodes_[node].truncated; }
  uint32_t depth(uint32_t node) const { return nodes_[node].depth; }
  uint32_t caller(uint32_t node) const { return nodes_[node].caller; }
  const CompactFrame& frame(uint32_t node) const { return nodes_[node].frame; }
  size_t size() const { return nodes_.size(); }

 private:
  std::vector<TraceNode> nodes_;
  std::unordered_map<TraceNode, uint32_t, TraceNodeHash, TraceNodeEq> ids_;
};

// A recording thread's own events (JFR's thread-local buffers): its interned stacks, its
// samples aggregated by stack (Profile::add_sample) and its counters, merged into the
// profile at exit or at a dump; with a .jsonl output, its events on their way to the
// stream. The owner takes the mutex for each record, a merge or dump takes it once,
// so it is hardly ever contended and no thread waits for another to record. Never
// touched by a handler. Its memory grows with distinct stacks, not with time.
struct EventBuffer {
  std::mutex mutex;
  Profile part;  // stacks, aggregated samples and stats only
  // A Mini thread's buffer interns the traces its polls build in compact form, and its
  // events' stack ids index `compact` (named once per distinct trace at the merge); the
  // sampler thread's buffer interns named traces in part.stacks.
  bool compact_stacks = false;
  TraceTree compact;
  // .jsonl: the events recorded since they were last written, as they are. Their lines
  // are made by whoever writes them (the dump thread every kStreamFlushNs), not by the
  // recording thread at its poll or visit: a line costs microseconds, the event a copy.
  std::vector<Event> jsonl_events;
  // .jfr: events not yet appended to the stream, and each stack's key in its pools (0: not
  // yet interned).
  std::string jfr_events;
  std::vector<uint64_t> jfr_stack_keys;
  // Held by whoever writes this buffer's events, from taking them to writing them, so
  // that a thread's lines keep their order; `mutex` is held only to take them (the lines
  // are made without it, so the recording thread does not wait for them). Taken before
  // `mutex`, except by the recording thread's own write (emit), which only tries it, and
  // by a thread that ends (flush_streams), which no holder of it waits for.
  std::mutex stream_mutex;
  // Under stream_mutex: the events being made lines; each stack's JSON text with whether
  // the depth limit cut it, made once per stack; and the stacks taken (read under `mutex`
  // too, since the recording thread may be interning) whose text is not made yet.
  std::vector<Event> jsonl_taken;
  struct StackJson {
    std::string text;
    bool truncated = false;
    bool taken = false;
  };
  std::vector<StackJson> stack_json;
  std::vector<std::pair<uint32_t, StackTrace>> stacks_taken;
  // Records an event: a sample into `part` (aggregated), and with a .jsonl or .jfr output
  // the event for that stream.
  void emit(const Event& e);
  // Under `mutex` and stream_mutex: moves the .jsonl events to jsonl_taken (with each
  // stack they name that has no JSON yet) and the .jfr events onto `jfr`.
  void take_streams(std::string& jfr);
  // Under stream_mutex alone: jsonl_taken's lines onto `lines`, which is written to the
  // stream whenever it holds a block (kStreamBlock); jsonl_taken is emptied.
  void make_lines(std::string& lines);
  // Under `mutex`: writes everything the buffer holds to its stream (a thread that ends).
  void flush_streams();
  // Under `mutex` and stream_mutex: take_streams, make_lines and append both now.
  void write_streams();
  // A stack of `part` (the sampler thread's) or of `compact` (a Mini thread's) with names.
  StackTrace stack_trace(uint32_t stack) const;
};

// The walks a thread's handler made (async, oracle) and their frames, waiting for the
// sampler thread. Most of a thread's sampling state when it exists, so it exists only
// while a sampler that walks in the handler runs; the arena holds a few interruptions'
// walks at the deepest (handler_arena_frames) and its pages cost memory once written.
struct HandlerWalks {
  explicit HandlerWalks(size_t arena_frames) : arena(arena_frames) {}
  SpscRing<WalkRecord, 512> records;
  FrameArena arena;
};
size_t handler_arena_frames();  // event_buffers.cpp

// Per Mini thread, what sampling it needs (runtime::Thread::sampler_state points to it):
// the requests the handler stores and the poll serves (cooperative, safepoint), the walks the
// handler made (async, oracle) and what it had to count. It lives while the thread runs:
// when the thread ends, what it holds is recorded and it is freed (event_buffers.cpp).
struct ThreadSampling {
  // The requests waiting for the thread's next poll (a uniform random subset of a long
  // stretch without one), and what an interruption could not keep (a request the store
  // left out, or a handler walk the walk ring had no room for), on its way to the sampler
  // thread, which records each as a drop with its id (drain_walks). The sampler thread
  // drains it every period and sends a thread at most one signal per period, each
  // leaving out at most one request and kHandlerWalks walks, so it never fills.
  RequestReservoir<256> requests{reinterpret_cast<uintptr_t>(this) ^ now_ns()};
  struct LeftOut {
    uint64_t id, ticks;
    std::optional<SamplerId> walk;  // the sampler whose walk it was; none: the request
  };
  SpscRing<LeftOut, 32> left_out;
  // Passes `l` on to the sampler thread: the ring never fills (above), which a checking
  // build asserts; false when it had no room, in a build that does not check.
  bool pass_on(const LeftOut& l) {
    bool passed = left_out.push(l);
    MVM_ASSERT(passed, "a thread's left_out ring has room for what one interruption leaves out");
    return passed;
  }
  std::unique_ptr<HandlerWalks> walks;  // only with a sampler that walks in the handler
  // The sampler thread's signal to this thread. Linux keeps one pending SIGPROF per thread
  // (a second one sent before the first is delivered merges with it), so the sampler sends
  // none while one is pending, nor while its handler runs (signal_coalesced): a signal sent
  // then would wait in the kernel for the handler's return and be delivered before the
  // thread ran an instruction of its own. A held handler that lost its core (a busy
  // machine) would then take the next one at the same pc, again and again, and the thread
  // would never reach the poll that serves its requests. This one word is all there is to
  // know about it:
  // - kNoSignal: none pending, no handler running;
  // - kSent, kSentHold: sent; its handler serves it (kSent), or publishes its registers
  //   and waits for the sampler thread (kSentHold: classical, --suspend=handshake, a
  //   --native-frames walk of a thread in native code);
  // - kInHandler: taken; its handler runs, and frees the word as it returns;
  // - kWithdrawn: still pending, but the sampler thread stopped waiting for it and ended
  //   its interruption itself (hold_timed_out); the handler that takes it leaves no trace.
  // Whoever takes it out of kSent or kSentHold, by one atomic operation, ends its
  // interruption: the handler, the sampler giving up, the thread's end (thread_gone) or
  // the end of the program (signal_not_delivered). No two of them count it, and a handler
  // holds its thread only for a sampler that then waits for it, whatever the time.
  enum : int { kNoSignal, kSent, kSentHold, kInHandler, kWithdrawn };
  std::atomic<int> signal{kNoSignal};
  // Takes a signal still pending at the thread's or the program's end: true when one was
  // sent and neither handled nor withdrawn, so its interruption is the caller's to end. A
  // handler that has taken its signal keeps kInHandler: the program's end waits for it.
  bool take_pending_signal() {
    int s = signal.load(std::memory_order_acquire);
    while (s == kSent || s == kSentHold)
      if (signal.compare_exchange_weak(s, kNoSignal, std::memory_order_acq_rel, std::memory_order_acquire)) return true;
    return false;
  }
  // Holding the thread (a kSentHold signal): its handler publishes its registers
  // (kPublished) and waits until the sampler thread, done with its part, lets it go
  // (kIdle). The next hold needs a new signal, which the sampler sends only once this
  // handler has returned (kInHandler above), so it never waits for a handler to leave.
  enum : int { kIdle, kPublished };
  std::atomic<int> handshake{kIdle};
  Registers regs{};
  bool regs_in_java = false;
  uint64_t handler_entry_ns = 0;
  uint64_t handler_entry_cpu_ns = 0;  // the thread's CPU time then (thread_cpu_ns)
  WalkRecord pending[kHandlerWalks];  // the handler's walks while held, pushed by the sampler
  int pending_count = 0;
  uint64_t pending_cursor = 0;
  // Requests and walks left out with no room in left_out to pass their ids on (pass_on
  // says there is always room): counted as drops all the same, without an event, in a
  // build that does not check it.
  std::atomic<uint64_t> ring_full{0};
  std::atomic<uint64_t> walks_full[kSamplerCount] = {};
  runtime::Thread* thread = nullptr;
  int thread_id = 0;
  EventBuffer events;  // what this thread records at its polls (compact stacks)
  // The stack watermark (docs/architecture.md, "The stack watermark and the return
  // barrier"): the frames below the marked one, bottom first, each with its fp and the
  // node of the stack from its top scope down in events.compact; while the mark lives
  // (ThreadCore::barrier_depth > 0) all of them are valid. Only this thread touches it,
  // at its polls.
  // Once the marked frame returns (the barrier sets barrier_depth to 0) the entries only
  // record where frames were; a new frame found at the same fp, executing at the same pc
  // (and, interpreted, at the same bcp) over frames found so, from the bottom up, is the
  // same stack again, with the same node (poll_client.cpp).
  struct CachedFrame {
    uintptr_t fp;
    uint32_t node;
    uintptr_t pc = 0;   // where the frame was executing (a return pc: never the top frame)
    uintptr_t bcp = 0;  // an interpreted frame's saved bcp; 0 for a compiled frame
  };
  std::vector<CachedFrame> watermark;
  uint64_t watermark_freed = 0;  // runtime::freed_code_count() when it was set
  std::unique_ptr<NativeWalkBuffers> native;  // --native-frames only
  ThreadSampling* next_started = nullptr;     // ThreadRegistry::started's list
  ThreadSampling() { events.compact_stacks = true; }
};

// A Mini thread's sampling state; null before the profiler saw it start.
inline ThreadSampling* sampling_of(runtime::Thread* t) {
  return static_cast<ThreadSampling*>(t->sampler_state.load(std::memory_order_acquire));
}

// What start_profiler decides before the handler, the sampler thread and the poll client
// exist: read by all of them without a lock, and written by nothing else, so the state
// hands it out const (ProfilerState::plan).
struct SamplingPlan {
  ProfilerOptions options;
  bool want[kSamplerCount] = {};
  bool want_request = false;        // a sampler served at the poll: the handler builds a request
  bool want_handler_walks = false;  // a sampler that walks in the handler
  bool hold = false;                // the handler waits for the sampler thread
  uint64_t start_ns = 0;            // when sampling started
  // MINIVM_TEST_HANDLER_SPIN_US (tests only): each handler that takes its signal spins
  // that long first, so that a test finds handlers running at any moment, the exit's.
  uint64_t test_handler_spin_ns = 0;

  bool wants(SamplerId s) const { return want[size_t(s)]; }
};

// What every context reads and writes, the signal handler included: atomics only.
struct SamplingSignals {
  std::atomic<bool> running{false};
  std::atomic<uint64_t> next_sample{1};  // the next interruption's id
  // Set when sampling stops: a handler that runs after it leaves no trace, and the signal
  // it came from is accounted as never delivered.
  std::atomic<bool> closed{false};
  // At the end (settle_handlers): signals still pending once `closed` was set, taken back
  // (not delivered), and handlers that had taken theirs and still ran when the final
  // profile was merged (in flight in it).
  std::atomic<uint64_t> not_delivered{0};
  std::atomic<uint64_t> handlers_left{0};
};

// The threads' sampling states, and what the threads that ended left. Under `mutex`, which
// every use of a ThreadSampling by another thread than its own holds (the sampler thread's
// visits and drains, a dump's merge): a thread's state is freed under it. `started` and
// `waiters` alone are touched without it.
struct ThreadRegistry {
  std::mutex mutex;
  std::vector<ThreadSampling*> live;  // the live Mini threads, in start order (live_threads())
  // Threads that started since `live` was last read, newest first, pushed without the
  // lock: a thousand threads starting at once would otherwise queue on the mutex, each
  // handing it to the next only when that one gets a core, and a dump or the exit would
  // wait behind all of them. Whoever next holds the lock moves them into `live`.
  std::atomic<ThreadSampling*> started{nullptr};
  // A dump or the .jsonl flush waiting for the mutex: the sampler thread, which takes
  // it again at once when it is behind its periods, lets them in first.
  std::atomic<int> waiters{0};
  // What the threads that ended left: their events (named stacks; the buffer has its own
  // lock) and the counters their handlers kept, merged at exit with the live threads'.
  EventBuffer ended_events;
  uint64_t ended_ring_full = 0;
  uint64_t ended_walks_full[kSamplerCount] = {};
};

// The sampler thread's own: only it touches these while it runs (its buffer has its own
// lock for a dump's merge); start_profiler and finish_profiler start and stop it.
struct SamplerThreadState {
  EventBuffer events;  // what the sampler thread records (classical, async, oracle, native)
  std::thread thread;
  // It sleeps on this between periods, so that stopping it (running false, then a
  // notify) wakes it at once instead of after a whole --interval.
  std::mutex wake_mutex;
  std::condition_variable wake;
  // The classical walk's pre-allocated buffer.
  std::vector<CompactFrame> classical_frames;
};

// Everything the profiler keeps while it runs, grouped by who may touch it.
class ProfilerState {
 public:
  const SamplingPlan& plan() const { return plan_; }
  SamplingSignals signals;
  ThreadRegistry threads;
  SamplerThreadState sampler;
  JsonlStream jsonl;        // open when --profile-out is a .jsonl file (whole lines, its own lock)
  std::string jsonl_error;  // why it could not be opened (start_profiler; read at exit)
  JfrStream jfr;            // open when --profile-out is a .jfr file (whole events, its own lock)
  std::string jfr_error;    // why it could not be opened
  Profile profile;          // the merged profile, built by finish_profiler once sampling stopped
  // The collections so far (gc_events.cpp): their totals, under their own mutex; each
  // one's events went to the .jsonl or .jfr stream as it came.
  struct {
    std::mutex mutex;
    Collections totals;
  } collections;

 private:
  friend void start_profiler(const ProfilerOptions& options);
  SamplingPlan plan_;
};
extern ProfilerState g_state;  // profiler.cpp

// --- interruption.cpp: the signal handler and the requests it builds -----------------
void on_sigprof(int, siginfo_t*, void* context);
// The request for an interrupted context: built from the registers, or a failed one
// when the thread had left Java.
SampleRequest request_for(const Registers& regs, bool in_java);
// Stamps a request with its interruption (id, when, the thread's CPU time then, how long
// the thread was held), offers it to the thread's stored requests and arms its poll; a
// request the store leaves out goes to the sampler thread as a drop.
void push_request(runtime::Thread* t, ThreadSampling* st, SampleRequest r, uint64_t id, uint64_t ticks,
                  uint64_t cpu_ticks, uint64_t held);
// The walks at the interruption (the samplers taken in_handler), into the thread's arena
// from `cursor`; returns how many records it filled.
// `context`: the handler's ucontext_t, for the libunwind walk of --native-frames.
int walk_in_handler(runtime::Thread* t, ThreadSampling* st, const Registers& regs, bool in_java, const void* context,
                    uint64_t& cursor, WalkRecord out[kHandlerWalks]);
// One sampler's walk of an interrupted thread under crash protection, or not_in_java.
WalkResult walk_interrupted(SamplerId sampler, runtime::Thread* t, const Registers& regs, bool in_java,
                            FrameSink& sink);
// A thread interrupted at the instruction that decides its poll has read its poll word
// already: arming the word alone would let this poll pass, and at a return poll the
// sampled frame would be gone before the request is served. So this very poll is made to
// see the arming (called after the thread was armed, in the handler's context `uc`):
// - a trap poll interrupted between its load of the poll word and its test
//   (docs/architecture.md, section 3) has the good page in r10: r10 gets the poll word's
//   current page, and traps if armed;
// - a branch poll interrupted between its compare and its `ja` has flags that say "not
//   armed": if the thread is armed now, it resumes at the poll's stub, as if it had
//   branched.
void catch_poll_in_flight(runtime::Thread* t, ucontext_t* uc);
// Publishes the arena up to `cursor` and the walk records for the sampler thread.
void push_walks(ThreadSampling* st, WalkRecord* recs, int n, uint64_t id, uint64_t ticks, uint64_t held,
                uint64_t cursor);

// --- sampler_thread.cpp ----------------------------------------------------------------
void sampler_loop();
// Records the walks every thread's handler made and the requests its store left out
// (also once more at exit).
void drain_all_walks();
// The same for one thread (the caller holds g_state.threads.mutex).
void drain_walks(ThreadSampling* st);

// --- poll_client.cpp -------------------------------------------------------------------
runtime::PollClient& poll_client();

// --- code_roots.cpp: the requests' pcs, kept alive by code unloading ------------------
runtime::CodeRootClient& code_root_client();

// --- event_buffers.cpp: per-thread state and recording into a buffer's part ----------
// The live Mini threads, in start order, the ones that started since the last call moved
// in; the caller holds g_state.threads.mutex.
std::vector<ThreadSampling*>& live_threads();
// The most frames a sample of `s` keeps (--stack-depth; classical and async at most
// kGuessDepthLimit, JFR's default, as the walks they imitate).
uint32_t depth_limit(SamplerId s);
// The VM's thread hook: a starting thread gets its ThreadSampling; an ending one's
// unserved requests are failures.
void on_thread(runtime::Thread* t, bool starting);
// One interruption for every sampler, counted when the sampler thread sends its signal
// (or visits a thread in native code): its outcome, recorded later by whoever ends it,
// is a sample, a failure or a drop.
void count_interruption(Profile& p);
// An ExecutionSample for one sampler; biased (fell back to the poll-site stack) when a
// reason is given.
// `weight`: how many requests of its stretch the sample stands for (RequestReservoir), 1
// for every sample not served from a stretch that overflowed.
void record_sample(EventBuffer& b, SamplerId sampler, uint64_t id, uint64_t ticks, uint64_t held, int thread,
                   uint32_t stack, std::optional<Reason> biased, bool truncated, uint64_t weight = 1);
// An interruption a thread could not keep (ring_full): a DroppedSample event with its id
// for the samplers served at the poll (a request its store left out) or for the sampler
// whose handler walk found no room (`walk`).
void record_left_out(EventBuffer& b, uint64_t id, uint64_t ticks, int thread, std::optional<SamplerId> walk);
// The safepoint latency of a request served at a poll, from the interruption to
// `served_ns`, and of it the thread's time on a CPU (to its CPU time `served_cpu_ns`):
// counted for every sampler that takes its stack at the poll.
void record_latency(EventBuffer& b, const SampleRequest& r, int thread, uint32_t stack, uint64_t served_ns,
                    uint64_t served_cpu_ns);
// A NativeMethodSample for every sampler: a thread in native code is walked once for all.
void record_native(EventBuffer& b, uint64_t id, uint64_t ticks, uint64_t held, int thread, uint32_t stack,
                   bool truncated);
// A failed interruption for one sampler, with a FailedSample event when its id is known.
void record_failure(EventBuffer& b, SamplerId sampler, Reason reason, uint64_t id, uint64_t ticks, int thread);
// The same for every sampler.
void record_failure_all(EventBuffer& b, Reason reason, uint64_t id, uint64_t ticks, int thread);
// The same for the samplers served at the poll.
void record_request_failure(EventBuffer& b, Reason reason, const SampleRequest& r, int thread);
// The counters alone, for interruptions that ended without an id (at exit): one failure
// for every sampler, or for the samplers served at the poll.
void count_failure_all(Profile& p, Reason reason);
void count_request_failure(Profile& p, Reason reason);

// --- profiler.cpp ----------------------------------------------------------------------
// Writes a profile where the options say: at exit (`final`) the text report on stderr,
// --profile-out and --profile-stats; in a dump the files (each replaced whole), or the text
// report on stderr when no file is named. A .jsonl output is the stream, flushed (closed
// at exit).
bool write_reports(const Profile& profile, bool final);  // false if one could not be written

// --- gc_events.cpp ---------------------------------------------------------------------
// The runtime's collection observer (runtime/gc.h): each collection counted into
// g_state.collections and, with a .jsonl or .jfr output, written to the stream at once.
void on_collection(const runtime::GcEvent& e);

// --- dump_thread.cpp -------------------------------------------------------------------
// Installs the handlers of SIGINT, SIGTERM, SIGPIPE and SIGUSR2 and starts the thread
// that acts on them (and on --profile-dump-every); stopping it waits for a dump under way.
void start_dump_thread();
void stop_dump_thread();

// --- merge.cpp -------------------------------------------------------------------------
// Every buffer merged into one profile, samples in time order, and what has not ended
// accounted: full rings (dropped), and requests left in rings and signals still pending:
// failures when `final` (the program ends), in flight in a dump taken while it runs.
Profile snapshot_profile(bool final);
// After `closed`, before the final merge: takes back every signal still pending (so no
// late handler records anything after the merge) and waits until no handler that took
// its signal earlier still runs, so that the merge counts what each recorded. Sets
// g_state.signals' not_delivered and handlers_left (those still running after
// kHandlerWaitNs: none but on a thread kept off every CPU that long).
void settle_handlers();
// g_state.threads.mutex for a thread other than the sampler thread, which lets it in first.
std::unique_lock<std::mutex> lock_threads();
// Writes every buffer's .jsonl lines and .jfr events to their stream: at a dump, at the
// end, and every kStreamFlushNs from the dump thread.
void flush_streams();
// One buffer's stacks (re-interned, each compact trace named once), counters and events
// into a profile.
void merge_into(Profile& to, const EventBuffer& buf);

}  // namespace sampler
