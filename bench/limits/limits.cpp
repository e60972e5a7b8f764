// minivm_limits: the machine's physical floors for sampling, printed as one JSON object.
//
// A sampler that interrupts a thread with a signal cannot hold that thread for less than a
// signal round trip; a safepoint poll that traps cannot cost less than a fault plus a signal
// frame plus sigreturn. This program measures both on the machine it runs on, with the cost
// of the clock itself, so the held times bench/run.py reports can be read against them.
//
//   signal_round_trip_ns     tgkill(SIGPROF) to a spinning thread until its handler's store
//                            is seen by the sender
//   signal_handler_entry_ns  tgkill until the handler's own CLOCK_MONOTONIC read
//   poll_trap_ns             one `test %eax,(%rdi)` against a PROT_NONE page, the SIGSEGV
//                            handler stepping over it (clock read to clock read)
//   poll_untrapped_ns        the same instruction against a readable page (mean per poll)
//   clock_gettime_ns         mean cost of one clock_gettime(CLOCK_MONOTONIC)
//   periodic_signal_slowdown a thread's slowdown when another thread wakes every 1 ms and
//                            signals it (an empty handler): the least any sampler that
//                            interrupts with signals costs a running thread at 1 kHz
//                            (median and quartiles of alternating with/without pairs)
//   periodic_signal_sender_cpu_ns  that sender's CPU time per wake-up and tgkill (median)
//
// Percentiles are nearest-rank. Nothing is pinned; every phase has a time budget, so a busy
// machine gives fewer samples ("n") rather than a long run. --quick takes 1/10 of the samples.

#if !defined(__x86_64__) || !defined(__linux__)
#error "minivm_limits measures x86-64 Linux (inline asm, REG_RIP)"
#endif

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

namespace {

using Ns = std::int64_t;

Ns now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return Ns{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "minivm_limits: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

// ---------------------------------------------------------------------------------------
// Signal to another thread.

// Each on its own cache line: the target's loop counter, the handler's sequence number, and
// the handler's entry timestamp.
struct alignas(64) PaddedAtomic {
  std::atomic<Ns> v{0};
};
static_assert(std::atomic<Ns>::is_always_lock_free, "handlers need lock-free atomics");

PaddedAtomic g_loop;      // incremented by the target on every spin iteration
PaddedAtomic g_seq;       // incremented by the SIGPROF handler
PaddedAtomic g_entry;     // CLOCK_MONOTONIC read first thing in the entry-timing handler
PaddedAtomic g_tid;       // the target's kernel thread id, once it runs
std::atomic<bool> g_stop{false};

void on_prof_round_trip(int, siginfo_t*, void*) {
  g_seq.v.store(g_seq.v.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

void on_prof_entry(int, siginfo_t*, void*) {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);  // first thing: async-signal-safe (vDSO)
  int saved_errno = errno;
  g_entry.v.store(Ns{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec, std::memory_order_relaxed);
  g_seq.v.store(g_seq.v.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  errno = saved_errno;
}

void install(int sig, void (*handler)(int, siginfo_t*, void*)) {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = handler;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(sig, &sa, nullptr) != 0) die("sigaction");
}

void spin_target() {
  g_tid.v.store(gettid(), std::memory_order_release);
  Ns i = 0;
  while (!g_stop.load(std::memory_order_relaxed)) g_loop.v.store(++i, std::memory_order_relaxed);
}

// Spins until pred() holds; yields after a while so a single core still makes progress.
// Returns false if it took longer than the give-up time.
template <class Pred>
bool spin_until(Pred pred, Ns give_up_ns) {
  Ns start = 0;
  for (std::uint32_t k = 0; !pred(); ++k) {
    if ((k & 1023) == 1023) {
      Ns t = now_ns();
      if (start == 0) start = t;
      else if (t - start > give_up_ns) return false;
      else if (t - start > 50'000) sched_yield();
    }
  }
  return true;
}

// One phase of the signal measurement: `samples` timed signals after `warmup` untimed ones,
// within `budget_ns`. entry=false: tgkill to observed store; entry=true: tgkill to handler entry.
std::vector<Ns> signal_phase(pid_t tid, bool entry, int warmup, int samples, Ns budget_ns) {
  install(SIGPROF, entry ? on_prof_entry : on_prof_round_trip);
  std::vector<Ns> out;
  out.reserve(samples);
  const pid_t pid = getpid();
  const Ns deadline = now_ns() + budget_ns;
  for (int i = 0; i < warmup + samples; ++i) {
    const Ns want = g_seq.v.load(std::memory_order_relaxed) + 1;
    const Ns t0 = now_ns();
    if (tgkill(pid, tid, SIGPROF) != 0) die("tgkill");
    if (!spin_until([&] { return g_seq.v.load(std::memory_order_acquire) >= want; },
                    1'000'000'000)) {
      std::fprintf(stderr, "minivm_limits: SIGPROF not handled within 1 s; giving up\n");
      break;
    }
    const Ns t1 = now_ns();
    if (i >= warmup) out.push_back(entry ? g_entry.v.load(std::memory_order_relaxed) - t0 : t1 - t0);
    // Let the target leave the handler and get back to its loop before the next signal.
    const Ns seen = g_loop.v.load(std::memory_order_relaxed);
    spin_until([&] { return g_loop.v.load(std::memory_order_relaxed) != seen; }, 1'000'000'000);
    if (t1 > deadline) break;
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// A signal every millisecond: the floor of the slowdown at 1 kHz.
//
// The worker runs a fixed chunk of arithmetic and times it; a chunk with a sender (a
// thread that sleeps to absolute 1 ms deadlines and tgkills the worker, as minivm's
// sampler thread does) alternates with one without, the order swapped every pair, and
// each pair gives one ratio. What a sampler's handler and polls do comes on top of this.

constexpr Ns kPeriodNs = 1'000'000;
std::atomic<int> g_chunk_phase{0};  // 0 idle, 1 run a chunk, 2 chunk done, 3 quit
std::atomic<bool> g_sending{false};
std::atomic<Ns> g_chunk_ns{0};
std::atomic<long> g_chunk_iterations{0};
std::atomic<long> g_sends{0};

void on_prof_empty(int, siginfo_t*, void*) {}

Ns thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return Ns{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Arithmetic that stays in registers (no memory traffic for the signal to disturb beyond
// its own), with a dependency chain the compiler cannot fold.
std::uint64_t chunk(long iterations) {
  std::uint64_t s = 1;
  for (long i = 0; i < iterations; ++i) {
    s = s * 6364136223846793005u + std::uint64_t(i);
    asm volatile("" : "+r"(s));
  }
  return s;
}

void chunk_worker() {
  g_tid.v.store(gettid(), std::memory_order_release);
  for (;;) {
    int phase;
    while ((phase = g_chunk_phase.load(std::memory_order_acquire)) != 1 && phase != 3) sched_yield();
    if (phase == 3) return;
    const Ns t0 = now_ns();
    std::uint64_t s = chunk(g_chunk_iterations.load(std::memory_order_relaxed));
    asm volatile("" : : "r"(s));
    g_chunk_ns.store(now_ns() - t0, std::memory_order_relaxed);
    g_chunk_phase.store(2, std::memory_order_release);
  }
}

void sender(pid_t tid, Ns& cpu_ns) {
  const pid_t pid = getpid();
  const Ns cpu0 = thread_cpu_ns();
  timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  while (g_sending.load(std::memory_order_acquire)) {
    next.tv_nsec += kPeriodNs;
    if (next.tv_nsec >= 1'000'000'000) {
      next.tv_nsec -= 1'000'000'000;
      next.tv_sec++;
    }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr);
    if (!g_sending.load(std::memory_order_acquire)) break;
    if (tgkill(pid, tid, SIGPROF) != 0) die("tgkill");
    g_sends.fetch_add(1, std::memory_order_relaxed);
  }
  cpu_ns = thread_cpu_ns() - cpu0;
}

// One chunk on the worker, with the sender running or not; its wall time.
Ns timed_chunk(pid_t tid, bool signalled, Ns& sender_cpu_ns) {
  std::thread s;
  if (signalled) {
    g_sending.store(true, std::memory_order_release);
    s = std::thread(sender, tid, std::ref(sender_cpu_ns));
  }
  g_chunk_phase.store(1, std::memory_order_release);
  while (g_chunk_phase.load(std::memory_order_acquire) != 2) {
    timespec nap{0, 200'000};
    nanosleep(&nap, nullptr);
  }
  g_chunk_phase.store(0, std::memory_order_release);
  if (signalled) {
    g_sending.store(false, std::memory_order_release);
    s.join();
  }
  return g_chunk_ns.load(std::memory_order_relaxed);
}

struct PeriodicSignal {
  std::vector<double> slowdowns;  // one per pair: with / without - 1
  std::vector<double> sender_cpu_per_send_ns;
};

PeriodicSignal periodic_signal_phase(int pairs, Ns chunk_target_ns) {
  install(SIGPROF, on_prof_empty);
  g_tid.v.store(0);
  std::thread worker([] {
    sigset_t prof;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    pthread_sigmask(SIG_UNBLOCK, &prof, nullptr);
    chunk_worker();
  });
  spin_until([] { return g_tid.v.load(std::memory_order_acquire) != 0; }, 1'000'000'000);
  const auto tid = static_cast<pid_t>(g_tid.v.load(std::memory_order_acquire));
  // Calibrate the chunk to about chunk_target_ns.
  long iterations = 1'000'000;
  Ns unused = 0;
  for (int k = 0; k < 20; ++k) {
    g_chunk_iterations.store(iterations);
    Ns t = timed_chunk(tid, false, unused);
    if (t >= chunk_target_ns / 2) {
      iterations = long(double(iterations) * double(chunk_target_ns) / double(t));
      break;
    }
    iterations *= 4;
  }
  g_chunk_iterations.store(iterations);
  timed_chunk(tid, false, unused);  // warm-up
  PeriodicSignal out;
  for (int i = 0; i < pairs; ++i) {
    Ns with = 0, without = 0, cpu = 0;
    g_sends.store(0);
    if (i % 2 == 0) {
      with = timed_chunk(tid, true, cpu);
      without = timed_chunk(tid, false, unused);
    } else {
      without = timed_chunk(tid, false, unused);
      with = timed_chunk(tid, true, cpu);
    }
    out.slowdowns.push_back(double(with) / double(without) - 1);
    if (long sends = g_sends.load(); sends > 0) out.sender_cpu_per_send_ns.push_back(double(cpu) / double(sends));
  }
  g_chunk_phase.store(3, std::memory_order_release);
  worker.join();
  return out;
}

// ---------------------------------------------------------------------------------------
// Safepoint poll. The poll is `test %eax,(%rdi)`, emitted as bytes so its length is certain.

constexpr unsigned char kPoll[] = {0x85, 0x07};  // test %eax,(%rdi)
constexpr int kPollLen = sizeof kPoll;
#define MINIVM_POLL_ASM ".byte 0x85, 0x07"

void* g_trap_page = nullptr;
long g_page_size = 4096;

void on_segv(int sig, siginfo_t* info, void* uctx) {
  auto* uc = static_cast<ucontext_t*>(uctx);
  auto* addr = static_cast<char*>(info->si_addr);
  auto* page = static_cast<char*>(g_trap_page);
  auto* rip = reinterpret_cast<unsigned char*>(uc->uc_mcontext.gregs[REG_RIP]);
  if (page != nullptr && addr >= page && addr < page + g_page_size && rip[0] == kPoll[0] &&
      rip[1] == kPoll[1]) {
    uc->uc_mcontext.gregs[REG_RIP] += kPollLen;
    return;
  }
  // A real fault: put the default action back and let the instruction fault again.
  signal(sig, SIG_DFL);
}

inline void poll(const void* page) {
  asm volatile(MINIVM_POLL_ASM : : "D"(page) : "cc", "memory");
}

std::vector<Ns> trap_phase(int warmup, int samples, Ns budget_ns) {
  g_trap_page = mmap(nullptr, g_page_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (g_trap_page == MAP_FAILED) die("mmap");
  install(SIGSEGV, on_segv);
  std::vector<Ns> out;
  out.reserve(samples);
  const Ns deadline = now_ns() + budget_ns;
  for (int i = 0; i < warmup + samples; ++i) {
    const Ns t0 = now_ns();
    poll(g_trap_page);
    const Ns t1 = now_ns();
    if (i >= warmup) out.push_back(t1 - t0);
    if (t1 > deadline) break;
  }
  signal(SIGSEGV, SIG_DFL);
  return out;
}

double untrapped_poll_ns(long iterations) {
  void* page = mmap(nullptr, g_page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) die("mmap");
  for (long i = 0; i < iterations / 10; ++i) poll(page);  // warm-up
  const Ns t0 = now_ns();
  for (long i = 0; i < iterations; ++i) poll(page);
  const Ns t1 = now_ns();
  munmap(page, g_page_size);
  return double(t1 - t0) / double(iterations);
}

double clock_ns(long iterations) {
  Ns sink = 0;
  const Ns t0 = now_ns();
  for (long i = 0; i < iterations; ++i) sink += now_ns() & 1;
  const Ns t1 = now_ns();
  asm volatile("" : : "r"(sink));
  return double(t1 - t0) / double(iterations);
}

// ---------------------------------------------------------------------------------------
// Output.

// The nearest-rank p-quantile (p in 0..1) of sorted, non-empty `v`: the ceil(p * n)-th
// smallest, 1-based.
template <class T>
T nearest_rank(const std::vector<T>& v, double p) {
  auto r = static_cast<std::size_t>(std::ceil(p * double(v.size())));
  return v[std::clamp<std::size_t>(r, 1, v.size()) - 1];
}

// {p50, p99, max, n} of `v` in ns (nearest rank), nulls when empty.
nlohmann::ordered_json stats_json(std::vector<Ns> v) {
  if (v.empty()) return {{"p50", nullptr}, {"p99", nullptr}, {"max", nullptr}, {"n", 0}};
  std::sort(v.begin(), v.end());
  return {{"p50", nearest_rank(v, 0.50)}, {"p99", nearest_rank(v, 0.99)}, {"max", v.back()}, {"n", v.size()}};
}

// `x` rounded to `digits` decimals (what the report shows; the noise is larger).
double rounded(double x, int digits) {
  double scale = std::pow(10.0, digits);
  return std::round(x * scale) / scale;
}

// {median, q1, q3, n} of `v` (quartiles by nearest rank), rounded to `digits` decimals.
nlohmann::ordered_json quartiles_json(std::vector<double> v, int digits) {
  if (v.empty()) return {{"median", nullptr}, {"q1", nullptr}, {"q3", nullptr}, {"n", 0}};
  std::sort(v.begin(), v.end());
  return {{"median", rounded(nearest_rank(v, 0.5), digits)},
          {"q1", rounded(nearest_rank(v, 0.25), digits)},
          {"q3", rounded(nearest_rank(v, 0.75), digits)},
          {"n", v.size()}};
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--quick]\nPrints the machine's signal and poll-trap floors "
                   "as one JSON object.\n",
                   argv[0]);
      return std::strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  const int div = quick ? 10 : 1;
  const int samples = 20000 / div, warmup = 1000 / div;
  // Time budgets per phase (a busy machine gets fewer samples, not a longer run): the
  // whole run stays under about 4.2 s, or 0.9 s with --quick.
  const Ns signal_budget = quick ? 300'000'000 : 1'500'000'000;
  const Ns trap_budget = quick ? 200'000'000 : 1'000'000'000;
  if (long ps = sysconf(_SC_PAGESIZE); ps > 0) g_page_size = ps;

  // Block SIGPROF here so only the target thread (which unblocks it) can ever take it.
  sigset_t prof;
  sigemptyset(&prof);
  sigaddset(&prof, SIGPROF);
  pthread_sigmask(SIG_BLOCK, &prof, nullptr);
  install(SIGPROF, on_prof_round_trip);
  std::thread target([&] {
    pthread_sigmask(SIG_UNBLOCK, &prof, nullptr);
    spin_target();
  });
  spin_until([] { return g_tid.v.load(std::memory_order_acquire) != 0; }, 1'000'000'000);
  const auto tid = static_cast<pid_t>(g_tid.v.load(std::memory_order_acquire));
  std::vector<Ns> round_trip = signal_phase(tid, false, warmup, samples, signal_budget);
  std::vector<Ns> entry = signal_phase(tid, true, warmup, samples, signal_budget);
  g_stop.store(true);
  target.join();

  // 13 pairs of ~100 ms chunks (about 100 signals a chunk): about 2.7 s; --quick 5 of 50 ms.
  PeriodicSignal periodic = periodic_signal_phase(quick ? 5 : 13, quick ? 50'000'000 : 100'000'000);

  std::vector<Ns> trap = trap_phase(warmup, samples, trap_budget);
  const double untrapped = untrapped_poll_ns(10'000'000L / div);
  const double clock = clock_ns(1'000'000L / div);

  nlohmann::ordered_json out = {
      {"cores", std::thread::hardware_concurrency()},
      {"quick", quick},
      {"clock_gettime_ns", rounded(clock, 2)},
      {"signal_round_trip_ns", stats_json(std::move(round_trip))},
      {"signal_handler_entry_ns", stats_json(std::move(entry))},
      {"poll_trap_ns", stats_json(std::move(trap))},
      {"poll_untrapped_ns", rounded(untrapped, 3)},
      {"periodic_signal_slowdown", quartiles_json(std::move(periodic.slowdowns), 4)},
      {"periodic_signal_sender_cpu_ns", quartiles_json(std::move(periodic.sender_cpu_per_send_ns), 0)}};
  std::printf("%s\n", out.dump(1).c_str());
  return 0;
}
