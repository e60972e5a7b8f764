#include "runtime/signals.h"

#include <signal.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "runtime/code_blob.h"
#include "runtime/errors.h"
#include "runtime/invariant.h"
#include "runtime/poll.h"
#include "runtime/stubs.h"
#include "runtime/thread.h"

namespace runtime {

namespace {

void write_err(const char* s) { (void)!write(2, s, strlen(s)); }

// Whether the calling thread has SIGPROF blocked (sigprocmask is async-signal-safe).
bool sigprof_blocked() {
  sigset_t now;
  return pthread_sigmask(SIG_BLOCK, nullptr, &now) == 0 && sigismember(&now, SIGPROF) == 1;
}

// initial-exec TLS (the main executable's own): safe to touch from a signal handler.
thread_local sigjmp_buf* tls_protection = nullptr;
std::atomic<unsigned long> g_protected_crashes{0};

void crash_handler(int sig, siginfo_t* info, void* ctx) {
  auto* uc = static_cast<ucontext_t*>(ctx);
  uintptr_t pc = uintptr_t(uc->uc_mcontext.gregs[REG_RIP]);
  uintptr_t addr = reinterpret_cast<uintptr_t>(info->si_addr);

  if (sig == SIGSEGV && poll_pages().is_bad_address(addr)) {
    const CodeBlob* blob = find_blob(pc);
    const PollSite* poll = blob ? blob->find_poll(pc) : nullptr;
    if (poll != nullptr) {
      // A registered poll: resume in the safepoint blob, which returns to resume_pc.
      auto* t = reinterpret_cast<Thread*>(uc->uc_mcontext.gregs[REG_R15]);
      MVM_ASSERT(t == Thread::current() && t->get_state() == ThreadState::in_java,
                 "a poll traps in Mini code, in Java, with r15 holding the thread's own Thread");
      MVM_ASSERT(sigprof_blocked(), "SIGPROF is blocked in this handler (its sa_mask, below)");
      t->core.poll_resume_pc = poll->resume_pc;
      // From here to the blob's last instruction the thread runs the VM's code, not
      // Mini code: a sampler must not take its pc for a Mini one (DESIGN.md, "Thread
      // states"). The blob stores in_java again just before it returns.
      t->set_state(ThreadState::in_vm);
      uc->uc_mcontext.gregs[REG_RIP] = greg_t(safepoint_blob_entry());
      return;
    }
  }

  if (sig == SIGSEGV && addr < kImplicitNullLimit) {
    const CodeBlob* blob = find_blob(pc);
    const ImplicitNull* site = blob ? blob->find_implicit_null(pc) : nullptr;
    if (site != nullptr) {
      // Compiled code read through null: its throw path runs with the registers as they
      // are, the faulting instruction not done (code_blob.h, ImplicitNull).
      uc->uc_mcontext.gregs[REG_RIP] = greg_t(site->handler);
      return;
    }
  }

  if ((sig == SIGSEGV || sig == SIGBUS) && tls_protection != nullptr) {
    sigjmp_buf* buf = tls_protection;
    tls_protection = nullptr;
    g_protected_crashes.fetch_add(1, std::memory_order_relaxed);
    siglongjmp(*buf, 1);  // restores the signal mask saved by sigsetjmp
  }

  Thread* t = Thread::current();
  if (t != nullptr && t->guard_low != 0 && addr >= t->guard_low && addr < t->stack_low) {
    // The method-entry limit check should have caught this; the guard page is the
    // backstop (e.g. deep native recursion). No safe way to walk: report and leave.
    write_err("error: stack overflow (guard page hit)\n");
    _exit(1);
  }

  char buf[256];
  const CodeBlob* blob = find_blob(pc);
  snprintf(buf, sizeof buf, "minivm: internal error: signal %d at pc 0x%lx (%s) accessing 0x%lx\n", sig,
           (unsigned long)pc, blob ? blob_kind_name(blob->kind) : "native code", (unsigned long)addr);
  write_err(buf);
  signal(SIGABRT, SIG_DFL);
  abort();
}

}  // namespace

void install_signal_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = crash_handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    // A sampling signal must not land inside this handler: its pc would be C++ code on a
    // thread still marked in_java. Blocked here, it arrives when the handler returns, in
    // the safepoint blob, where the thread is marked in_vm.
    sigaddset(&sa.sa_mask, SIGPROF);
    sigaction(SIGSEGV, &sa, nullptr);
    sigaction(SIGBUS, &sa, nullptr);
    sigaction(SIGILL, &sa, nullptr);
    sigaction(SIGFPE, &sa, nullptr);
    (void)poll_pages();  // create them before any thread can trap
  });
}

sigjmp_buf* set_crash_protection(sigjmp_buf* buf) {
  sigjmp_buf* old = tls_protection;
  tls_protection = buf;
  return old;
}

bool protected_call(void (*fn)(void*), void* arg) {
  sigjmp_buf buf;
  sigjmp_buf* outer = tls_protection;
  if (sigsetjmp(buf, 1) != 0) {
    tls_protection = outer;
    return false;
  }
  tls_protection = &buf;
  fn(arg);
  tls_protection = outer;
  return true;
}

unsigned long protected_crash_count() { return g_protected_crashes.load(std::memory_order_relaxed); }

void install_alt_signal_stack() {
  constexpr size_t kSize = 64 * 1024;
  stack_t ss;
  ss.ss_sp = malloc(kSize);
  ss.ss_size = kSize;
  ss.ss_flags = 0;
  sigaltstack(&ss, nullptr);
}

}  // namespace runtime

// Under AddressSanitizer (build-asan): the VM owns the synchronous signals (a poll trap
// is a SIGSEGV, crash protection longjmps out of a faulting stack read) and installs
// its own alternate signal stack on every Mini thread, so ASan must neither take those
// signals nor replace that stack. Every binary that installs the VM's handlers links
// this file, so no environment variable is needed to run them.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MINIVM_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(MINIVM_ASAN)
extern "C" __attribute__((used, visibility("default"))) const char* __asan_default_options() {
  return "handle_segv=0:handle_sigbus=0:handle_sigill=0:handle_sigfpe=0:use_sigaltstack=0";
}
#endif
