#include "sampler/profiler.h"

#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <thread>

#include "runtime/compiled_code.h"
#include "runtime/errors.h"
#include "runtime/poll.h"
#include "runtime/stack_walker.h"
#include "runtime/thread.h"
#include "runtime/vm.h"
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

// Per Mini thread: the ring the handler fills and the poll drains, and what the handler
// had to count because it could not make a request.
struct ThreadState {
  SpscRing<SampleRequest, 256> ring;
  // --suspend=handshake: the sampler asks (kAsked), the handler publishes its registers
  // (kPublished) and waits, the sampler builds and pushes the request and lets it go
  // (kResume); the handler then returns (kIdle).
  enum : int { kIdle, kAsked, kPublished, kResume };
  std::atomic<int> handshake{kIdle};
  Registers regs{};
  bool regs_in_java = false;
  uint64_t handler_entry_ns = 0;
  std::atomic<uint64_t> interruptions{0};
  std::atomic<uint64_t> ring_full{0};
  int thread_id = 0;
};

ProfilerOptions g_options;
std::atomic<bool> g_running{false};
std::atomic<uint64_t> g_next_sample{1};
std::atomic<uint64_t> g_orphan_signals{0};  // landed on no Mini thread (it had ended)
std::mutex g_profile_mutex;                 // guards g_profile and g_states
Profile g_profile;
std::vector<ThreadState*> g_states;
std::thread g_sampler_thread;
bool g_want_cooperative = false, g_want_safepoint = false;


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
  if (g_options.handshake) {
    // JEP 518: publish the context and wait while the sampler thread builds the request.
    int asked = ThreadState::kAsked;
    if (!st->handshake.compare_exchange_strong(asked, ThreadState::kAsked)) {
      // Not (or no longer) asked: the sampler gave up waiting for this signal.
      g_orphan_signals.fetch_add(1, std::memory_order_relaxed);
      errno = saved_errno;
      return;
    }
    st->regs = Registers{uintptr_t(uc->uc_mcontext.gregs[REG_RIP]), uintptr_t(uc->uc_mcontext.gregs[REG_RSP]),
                         uintptr_t(uc->uc_mcontext.gregs[REG_RBP]), uintptr_t(uc->uc_mcontext.gregs[REG_RBX]),
                         uintptr_t(uc->uc_mcontext.gregs[REG_R13])};
    st->regs_in_java = t->get_state() == runtime::ThreadState::in_java;
    st->handler_entry_ns = start;
    st->handshake.store(ThreadState::kPublished, std::memory_order_release);
    // sched_yield is async-signal-safe; on a machine with fewer cores than threads the
    // sampler thread needs the core to finish the request.
    while (st->handshake.load(std::memory_order_acquire) != ThreadState::kResume) sched_yield();
    st->handshake.store(ThreadState::kIdle, std::memory_order_release);
    errno = saved_errno;
    return;
  }
  st->interruptions.fetch_add(1, std::memory_order_relaxed);
  SampleRequest r;
  if (t->get_state() != runtime::ThreadState::in_java) {
    // It left Java between the sampler's look and the signal: nothing to sample, but the
    // interruption is reported (a FailedSample at its next poll).
    r.kind = RequestKind::failed;
    r.reason = "not_in_java";
  } else {
    Registers regs{uintptr_t(uc->uc_mcontext.gregs[REG_RIP]), uintptr_t(uc->uc_mcontext.gregs[REG_RSP]),
                   uintptr_t(uc->uc_mcontext.gregs[REG_RBP]), uintptr_t(uc->uc_mcontext.gregs[REG_RBX]),
                   uintptr_t(uc->uc_mcontext.gregs[REG_R13])};
    r = build_request(regs, g_options.stub_metadata);
  }
  r.id = g_next_sample.fetch_add(1, std::memory_order_relaxed);
  r.ticks = start;
  r.held_ns = now_ns() - start;
  if (st->ring.push(r))
    runtime::arm_poll(t);  // served at the thread's next poll
  else
    st->ring_full.fetch_add(1, std::memory_order_relaxed);
  errno = saved_errno;
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
  std::lock_guard<std::mutex> lock(g_profile_mutex);
  uint32_t stack = g_profile.stacks.intern(trace);
  for (const std::string& name : g_options.samplers) {
    SamplerStats& s = g_profile.stats[name];
    s.interruptions++;
    s.samples++;
    s.suspension_ns.push_back(held);
    Event e;
    e.type = EventType::NativeMethodSample;
    e.sampler = name;
    e.sample = id;
    e.thread = st != nullptr ? st->thread_id : t->id;
    e.time_ns = start;
    e.stack = stack;
    g_profile.events.push_back(e);
  }
}

// --suspend=handshake: signal the thread, wait until its handler has published its
// registers, build and push the request here, arm its poll, and let it go.
void handshake_sample(runtime::Thread* t, pid_t pid, int tid) {
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
  st->interruptions.fetch_add(1, std::memory_order_relaxed);
  SampleRequest r;
  if (!st->regs_in_java) {
    r.kind = RequestKind::failed;
    r.reason = "not_in_java";
  } else {
    r = build_request(st->regs, g_options.stub_metadata);  // the thread is held: its frames stay put
  }
  r.id = g_next_sample.fetch_add(1, std::memory_order_relaxed);
  r.ticks = st->handler_entry_ns;
  r.held_ns = now_ns() - st->handler_entry_ns;
  if (st->ring.push(r))
    runtime::arm_poll(t);
  else
    st->ring_full.fetch_add(1, std::memory_order_relaxed);
  st->handshake.store(ThreadState::kResume, std::memory_order_release);
  // Wait for the handler to leave before the next handshake can reuse the slot.
  while (st->handshake.load(std::memory_order_acquire) == ThreadState::kResume) sched_yield();
}

// --- the sampler thread -------------------------------------------------------------

void sampler_loop() {
  size_t next = 0;
  uint64_t deadline = now_ns();
  pid_t pid = getpid();
  while (g_running.load(std::memory_order_acquire)) {
    deadline += g_options.interval_ns;
    uint64_t now = now_ns();
    if (deadline > now) {
      timespec ts{time_t((deadline - now) / 1000000000u), long((deadline - now) % 1000000000u)};
      nanosleep(&ts, nullptr);
    } else {
      deadline = now;  // fell behind: do not burst
    }
    std::vector<runtime::Thread*> threads = runtime::VM::get().threads();
    if (threads.empty()) continue;
    size_t visits = std::min(threads.size(), g_options.threads_per_period);
    for (size_t i = 0; i < visits; i++) {
      runtime::Thread* t = threads[(next + i) % threads.size()];
      int tid = t->tid.load(std::memory_order_acquire);
      if (tid == 0) continue;
      runtime::ThreadState state = t->get_state();
      if (state == runtime::ThreadState::in_java && g_options.handshake)
        handshake_sample(t, pid, tid);
      else if (state == runtime::ThreadState::in_java)
        syscall(SYS_tgkill, pid, tid, SIGPROF);
      else if (state == runtime::ThreadState::in_native)
        sample_native(t);
      // in_vm and blocked threads are not sampled: not running Mini code, not in a native.
    }
    next = (next + visits) % threads.size();
  }
}

// --- the poll: cooperative reconstruction (JEP 518) ---------------------------------

void record_sample(const std::string& sampler, const SampleRequest& r, int thread, const StackTrace& trace,
                   bool biased, const char* reason, uint64_t served_ns) {
  SamplerStats& s = g_profile.stats[sampler];
  s.interruptions++;
  s.samples++;
  s.suspension_ns.push_back(r.held_ns);
  Event e;
  e.type = EventType::ExecutionSample;
  e.sampler = sampler;
  e.sample = r.id;
  e.thread = thread;
  e.time_ns = r.ticks;
  e.biased = biased;
  if (biased) {
    e.reason = reason;
    s.biased[reason]++;
  }
  e.stack = g_profile.stacks.intern(trace);
  g_profile.events.push_back(e);
  if (sampler == "cooperative") {
    Event l = e;
    l.type = EventType::SafepointLatency;
    l.biased = false;
    l.reason.clear();
    l.latency_ns = served_ns - r.ticks;
    s.latency_ns.push_back(l.latency_ns);
    g_profile.events.push_back(l);
  }
}

// A failed interruption: counted for every sampler, with a FailedSample event when its
// request (and so its id) is known.
void record_failure(const char* reason, const SampleRequest* r, int thread) {
  for (const std::string& name : g_options.samplers) {
    SamplerStats& s = g_profile.stats[name];
    s.interruptions++;
    s.failed[reason]++;
    if (r == nullptr) continue;
    Event e;
    e.type = EventType::FailedSample;
    e.sampler = name;
    e.sample = r->id;
    e.thread = thread;
    e.time_ns = r->ticks;
    e.reason = reason;
    g_profile.events.push_back(e);
  }
}
void record_failures(const char* reason, uint64_t n) {
  for (uint64_t i = 0; i < n; i++) record_failure(reason, nullptr, 0);
}

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
      StackTrace poll_site = to_trace(frames, 0);
      std::lock_guard<std::mutex> lock(g_profile_mutex);
      if (r.kind == RequestKind::failed) {
        record_failure(r.reason, &r, st->thread_id);
        continue;
      }
      if (g_want_cooperative) {
        StackTrace trace;
        const char* failure = reconstruct(r, frames, trace);
        if (failure != nullptr)
          record_sample("cooperative", r, st->thread_id, poll_site, true, failure, served);
        else
          record_sample("cooperative", r, st->thread_id, trace, false, nullptr, served);
      }
      if (g_want_safepoint) record_sample("safepoint", r, st->thread_id, poll_site, false, nullptr, served);
    }
  }
};
CooperativeClient g_client;


void on_thread(runtime::Thread* t, bool starting) {
  if (starting) {
    auto* st = new ThreadState();  // lives to the end: the final accounting reads it
    st->thread_id = t->id;
    {
      std::lock_guard<std::mutex> lock(g_profile_mutex);
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
  std::lock_guard<std::mutex> lock(g_profile_mutex);
  while (st->ring.pop(r)) record_failure("thread_ended_before_poll", &r, st->thread_id);
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
  for (const std::string& s : options.samplers) {
    g_want_cooperative |= s == "cooperative";
    g_want_safepoint |= s == "safepoint";
  }
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
  std::lock_guard<std::mutex> lock(g_profile_mutex);
  g_profile.duration_ns = now_ns() - g_profile.duration_ns;
  // Whatever the handlers counted, and requests still waiting in rings (a thread that
  // is still running when the program exits, e.g. after a runtime error elsewhere).
  for (ThreadState* st : g_states) {
    for (const std::string& name : g_options.samplers) g_profile.stats[name].dropped["ring_full"] += st->ring_full.load();
    for (const std::string& name : g_options.samplers) g_profile.stats[name].interruptions += st->ring_full.load();
    uint64_t left = st->ring.size();
    record_failures("program_ended_before_poll", left);
  }
  record_failures("thread_gone", g_orphan_signals.load());
  ReportOptions ro;
  ro.lines = g_options.lines;
  if (g_options.text_report) write_text(g_profile, std::cerr, ro);
  if (!g_options.out_path.empty()) {
    std::string error;
    if (!write_profile_file(g_profile, g_options.out_path, ro, error)) std::fprintf(stderr, "minivm: %s\n", error.c_str());
  }
  std::cerr.flush();
}

const Profile& current_profile() { return g_profile; }

}  // namespace sampler
