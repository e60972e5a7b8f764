#include "runtime/errors.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <vector>

#include "runtime/stack_walker.h"
#include "runtime/thread.h"
#include "runtime/vm.h"

namespace runtime {

namespace {
std::mutex g_hooks_mutex;
std::vector<ExitHook> g_hooks;
std::atomic<bool> g_exiting{false};

std::string base_name(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}
}  // namespace

void add_exit_hook(ExitHook hook) {
  std::lock_guard<std::mutex> lock(g_hooks_mutex);
  g_hooks.push_back(hook);
}

namespace {
// Runs the exit hooks, with output flushed around them, for the one caller that claimed
// the exit.
void run_exit_hooks() {
  std::vector<ExitHook> hooks;
  {
    std::lock_guard<std::mutex> lock(g_hooks_mutex);
    hooks = g_hooks;
  }
  std::fflush(stdout);
  for (ExitHook h : hooks) h();
  std::fflush(stdout);
  std::fflush(stderr);
}
}  // namespace

void idle_other_mini_threads() {
  int self = int(gettid());
  sched_param none{};
  for (Thread* t : VM::get().threads()) {
    int tid = t->tid.load(std::memory_order_acquire);  // 0 once it has ended
    // Lowering a thread of one's own process needs no privilege; a thread that ended
    // since (ESRCH) needs nothing.
    if (tid != 0 && tid != self) sched_setscheduler(tid, SCHED_IDLE, &none);
  }
}

[[noreturn]] void exit_vm(int code) {
  if (g_exiting.exchange(true)) {
    // Someone else is already ending the process (and will report); wait for it.
    for (;;) pause();
  }
  idle_other_mini_threads();
  run_exit_hooks();
  _exit(code);
}

void exit_vm_by_signal(int sig) {
  if (g_exiting.exchange(true)) return;
  idle_other_mini_threads();
  run_exit_hooks();
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, sig);
  pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
  raise(sig);
  _exit(128 + sig);  // a signal whose default action is not to end the process
}

std::string format_stack_trace(Thread* t, size_t max_frames) {
  // A runaway recursion has a million identical frames: runs of the same line are
  // folded into one with a count, and at most max_frames lines are printed.
  std::string out, previous;
  StackWalker walker(t);
  Frame f;
  size_t lines = 0, repeats = 0, skipped = 0;
  auto flush_repeats = [&] {
    if (repeats > 0) out += "  ... " + std::to_string(repeats) + " more of the line above\n";
    repeats = 0;
  };
  while (walker.next(f)) {
    const vm::Function& fn = *f.method->function;
    std::string line = "  at " + fn.name + " (" + base_name(VM::get().module().file_of(fn)) + ":" + std::to_string(f.line) + ")\n";
    if (line == previous) {
      repeats++;
      continue;
    }
    flush_repeats();
    previous = line;
    if (lines < max_frames) {
      out += line;
      lines++;
    } else {
      skipped++;
    }
  }
  flush_repeats();
  if (skipped > 0) out += "  ... " + std::to_string(skipped) + " more frames\n";
  return out;
}

[[noreturn]] void throw_runtime_error(Thread* t, const std::string& message) {
  throw_runtime_error(t, message, {});
}

[[noreturn]] void throw_runtime_error(Thread* t, const std::string& message, const std::vector<ThreadInError>& others) {
  static std::mutex error_mutex;
  if (!error_mutex.try_lock() || g_exiting.load()) {
    // Another thread is already reporting an error or exiting: it ends the program.
    for (;;) pause();
  }
  std::fflush(stdout);
  std::string text = "error: " + message + "\n" + format_stack_trace(t);
  for (const ThreadInError& other : others)
    text += "thread " + std::to_string(other.thread->id) + ", " + other.doing + ":\n" + format_stack_trace(other.thread);
  std::fwrite(text.data(), 1, text.size(), stderr);
  exit_vm(1);
}

}  // namespace runtime

namespace runtime {

const char* null_use_text(NullUse use) {
  static constexpr const char* kTexts[] = {
#define X(name, text) text,
      MINIVM_NULL_USES(X)
#undef X
  };
  return kTexts[size_t(use)];
}

void throw_null_reference(Thread* t, NullUse use) {
  throw_runtime_error(t, std::string("null reference: ") + null_use_text(use));
}

}  // namespace runtime
