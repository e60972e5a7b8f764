// The profile survives the ways a run ends, and can be had while it runs (like `jcmd
// JFR.dump` and `asprof dump`): SIGINT, SIGTERM and SIGPIPE (a closed pipe on stdout, as
// under `| head`) end the run with every report written and then the process ended by
// the same signal (status 128+sig); SIGUSR2 and every --profile-dump-every write the
// profile so far and the run goes on.
//
// Nothing is written in a signal handler: a handler writes the signal's number into a
// pipe (write() is async-signal-safe) and this file's thread, blocked on the pipe (with
// the dump period as its timeout), does the work in ordinary context: a dump merges a
// snapshot of the buffers (merge.cpp) and writes it; an ending signal runs the VM's exit
// hooks (the profiler's writes its reports) and re-raises the signal. A second SIGINT or
// SIGTERM while the first is being handled ends the process at once. A signal the process
// was started with ignored stays ignored.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <thread>

#include "runtime/errors.h"
#include "sampler/profiler_state.h"

namespace sampler {

namespace {

constexpr unsigned char kStop = 0;  // not a signal: stop_dump_thread

int g_pipe[2] = {-1, -1};
std::thread g_thread;
std::atomic<bool> g_ending{false};  // an ending signal is being handled

void on_signal(int sig) {
  int saved_errno = errno;
  bool ends = sig == SIGINT || sig == SIGTERM;
  if (ends && g_ending.exchange(true)) {  // the second Ctrl-C: no more waiting
    signal(sig, SIG_DFL);
    raise(sig);
  }
  unsigned char byte = static_cast<unsigned char>(sig);
  ssize_t ignored = write(g_pipe[1], &byte, 1);  // full pipe: one is already waiting
  (void)ignored;
  errno = saved_errno;
}

void dump() { write_reports(snapshot_profile(/*final=*/false), /*final=*/false); }

// The time until `next` (UINT64_MAX: none) as ppoll's timeout, or null to wait for ever.
const timespec* timeout_until(uint64_t next, timespec& wait) {
  if (next == UINT64_MAX) return nullptr;
  uint64_t now = now_ns(), left = next > now ? next - now : 0;
  wait = timespec{time_t(left / 1000000000u), long(left % 1000000000u)};
  return &wait;
}

void dump_loop() {
  constexpr uint64_t kNever = UINT64_MAX;
  uint64_t every = g_state.plan().options.dump_every_ns;
  uint64_t next_dump = every != 0 ? now_ns() + every : kNever;
  // A .jsonl file gets every buffer's lines at least this often (event_stream.h).
  uint64_t next_flush = g_state.jsonl.is_open() || g_state.jfr.is_open() ? now_ns() + kStreamFlushNs : kNever;
  for (;;) {
    pollfd fd{g_pipe[0], POLLIN, 0};
    timespec wait{};
    int n = ppoll(&fd, 1, timeout_until(std::min(next_dump, next_flush), wait), nullptr);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {  // a period is up
      if (now_ns() >= next_dump) {
        dump();  // flushes the .jsonl file too
        next_dump = std::max(next_dump + every, now_ns());
      } else {
        flush_streams();
      }
      if (next_flush != kNever) next_flush = now_ns() + kStreamFlushNs;
      continue;
    }
    unsigned char byte = kStop;
    if (n < 0 || read(g_pipe[0], &byte, 1) != 1 || byte == kStop) return;
    if (byte == SIGUSR2)
      dump();
    else if (byte == SIGPIPE && g_ending.exchange(true))
      continue;  // already ending
    else
      runtime::exit_vm_by_signal(byte);  // the exit hook writes the reports; back here if
                                         // the program is already exiting, to be stopped
  }
}

}  // namespace

void start_dump_thread() {
  if (pipe2(g_pipe, O_CLOEXEC) != 0) return;  // no dumps; the exit hook still writes at exit
  fcntl(g_pipe[1], F_SETFL, O_NONBLOCK);
  struct sigaction sa = {};
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int sig : kProfileSignals) {
    // One that the parent ignores stays ignored (a shell's background job ignores
    // SIGINT; `nohup`-style launchers): catching it would end the run where it would not.
    struct sigaction old = {};
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(sig, &sa, nullptr);
  }
  g_thread = std::thread(dump_loop);
}

void stop_dump_thread() {
  if (!g_thread.joinable()) return;
  if (g_thread.get_id() == std::this_thread::get_id()) {  // ending by a signal: this is it
    g_thread.detach();
    return;
  }
  unsigned char stop = kStop;
  while (write(g_pipe[1], &stop, 1) != 1 && errno == EINTR) {
  }
  g_thread.join();
}

}  // namespace sampler
