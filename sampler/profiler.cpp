#include "sampler/profiler.h"

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
  std::atomic<uint64_t> interruptions{0};
  std::atomic<uint64_t> not_in_java{0};   // the thread left Java before the signal landed
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

FrameRef frame_ref(const runtime::Method* m, int32_t bci, FrameKind kind) {
  FrameRef f;
  f.function = m->function->name;
  f.bci = bci;
  f.line = m->function->line_at(uint32_t(bci < 0 ? 0 : bci));
  f.kind = kind;
  return f;
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
  st->interruptions.fetch_add(1, std::memory_order_relaxed);
  if (t->get_state() != runtime::ThreadState::in_java) {
    st->not_in_java.fetch_add(1, std::memory_order_relaxed);
    errno = saved_errno;
    return;
  }
  auto* uc = static_cast<ucontext_t*>(context);
  Registers regs{uintptr_t(uc->uc_mcontext.gregs[REG_RIP]), uintptr_t(uc->uc_mcontext.gregs[REG_RSP]),
                 uintptr_t(uc->uc_mcontext.gregs[REG_RBP]), uintptr_t(uc->uc_mcontext.gregs[REG_RBX]),
                 uintptr_t(uc->uc_mcontext.gregs[REG_R13])};
  SampleRequest r = build_request(regs);
  r.id = g_next_sample.fetch_add(1, std::memory_order_relaxed);
  r.ticks = start;
  r.held_ns = now_ns() - start;
  if (st->ring.push(r))
    runtime::arm_poll(t);  // served at the thread's next poll
  else
    st->ring_full.fetch_add(1, std::memory_order_relaxed);
  errno = saved_errno;
}

StackTrace to_trace(const std::vector<runtime::Frame>& frames, size_t from);

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
      if (state == runtime::ThreadState::in_java)
        syscall(SYS_tgkill, pid, tid, SIGPROF);
      else if (state == runtime::ThreadState::in_native)
        sample_native(t);
      // in_vm and blocked threads are not sampled: not running Mini code, not in a native.
    }
    next = (next + visits) % threads.size();
  }
}

// --- the poll: cooperative reconstruction (JEP 518) ---------------------------------

struct Walked {
  std::vector<runtime::Frame> frames;  // top first, inlined scopes included
};

StackTrace to_trace(const std::vector<runtime::Frame>& frames, size_t from) {
  StackTrace out;
  for (size_t i = from; i < frames.size(); i++)
    out.push_back(frame_ref(frames[i].method, frames[i].bci, frames[i].kind));
  return out;
}

// Index of the first frame (scope) of the physical frame whose fp is `fp`, or npos.
size_t find_by_fp(const std::vector<runtime::Frame>& frames, uintptr_t fp) {
  for (size_t i = 0; i < frames.size(); i++)
    if (frames[i].pos.fp == fp) return i;
  return SIZE_MAX;
}

// The scopes of compiled code at an exact pc, innermost first.
void append_scopes(StackTrace& out, const runtime::CompiledCode* code, uintptr_t pc) {
  const runtime::PcDesc& d = code->desc_at(pc);
  for (uint16_t k = 0; k < d.scope_count; k++) {
    const runtime::Scope& s = code->scopes[d.scope_begin + k];
    out.push_back(frame_ref(s.method, s.bci, k + 1 == d.scope_count ? FrameKind::jit : FrameKind::inlined));
  }
}

const runtime::Method* method_of_bcp(const uint8_t* bcp) {
  runtime::VM& vm = runtime::VM::get();
  for (size_t i = 0; i < vm.method_count(); i++) {
    const runtime::Method* m = vm.method(i);
    if (bcp >= m->code && bcp < m->code + m->code_size) return m;
  }
  return nullptr;
}

// Rebuilds the sampled stack; returns nullptr on success, else the reason it could not.
const char* reconstruct(const SampleRequest& r, const std::vector<runtime::Frame>& frames, StackTrace& out) {
  switch (r.kind) {
    case RequestKind::unparsable:
      return r.reason;
    case RequestKind::compiled: {
      auto* code = static_cast<const runtime::CompiledCode*>(runtime::find_blob(r.pc));
      // Step over frames while real_fp <= sp: they were called after the sample.
      for (size_t i = 0; i < frames.size(); i++) {
        if (i > 0 && frames[i].pos.fp == frames[i - 1].pos.fp) continue;  // same physical frame
        if (frames[i].pos.fp + 16 <= r.sp) continue;
        if (runtime::find_blob(frames[i].pos.pc) != code) return "frame_escaped";
        size_t next = i;
        while (next < frames.size() && frames[next].pos.fp == frames[i].pos.fp) next++;
        append_scopes(out, code, r.pc);  // the bias correction: the sampled pc, not the poll's
        StackTrace rest = to_trace(frames, next);
        out.insert(out.end(), rest.begin(), rest.end());
        return nullptr;
      }
      return "frame_not_found";
    }
    case RequestKind::interpreted: {
      size_t i = find_by_fp(frames, r.fp);
      if (i == SIZE_MAX || frames[i].kind != runtime::FrameKind::interp) return "frame_not_found";
      const runtime::Method* m = frames[i].method;
      if (r.bcp < m->code || r.bcp >= m->code + m->code_size) return "bad_bcp";
      out.push_back(frame_ref(m, int32_t(r.bcp - m->code), FrameKind::interp));
      StackTrace rest = to_trace(frames, i + 1);
      out.insert(out.end(), rest.begin(), rest.end());
      return nullptr;
    }
    case RequestKind::compiled_over_caller:
    case RequestKind::interpreted_over_caller: {
      size_t i = find_by_fp(frames, r.caller_fp);
      if (i == SIZE_MAX) return "caller_not_found";
      if (r.kind == RequestKind::compiled_over_caller) {
        append_scopes(out, static_cast<const runtime::CompiledCode*>(runtime::find_blob(r.pc)), r.pc);
      } else {
        const runtime::Method* m = r.method != nullptr ? r.method : method_of_bcp(r.bcp);
        if (m == nullptr) return "bad_bcp";
        int32_t bci = r.bcp != nullptr ? int32_t(r.bcp - m->code) : 0;
        out.push_back(frame_ref(m, bci, FrameKind::interp));
      }
      StackTrace rest = to_trace(frames, i);
      out.insert(out.end(), rest.begin(), rest.end());
      return nullptr;
    }
  }
  return "unknown_request";
}

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

void record_failures(const char* reason, uint64_t n) {
  if (n == 0) return;
  for (const std::string& name : g_options.samplers) {
    SamplerStats& s = g_profile.stats[name];
    s.interruptions += n;
    s.failed[reason] += n;
  }
}

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
  uint64_t left = 0;
  while (st->ring.pop(r)) left++;
  std::lock_guard<std::mutex> lock(g_profile_mutex);
  record_failures("thread_ended_before_poll", left);
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
    record_failures("not_in_java", st->not_in_java.load());
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
