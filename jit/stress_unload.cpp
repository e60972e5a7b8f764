#include "jit/stress_unload.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "jit/tiered.h"
#include "runtime/code_unloading.h"
#include "runtime/errors.h"
#include "runtime/safepoint.h"
#include "runtime/vm.h"

namespace jit {

namespace {

std::mutex g_mutex;
std::condition_variable g_cv;
bool g_stop = false;     // set by the exit hook
bool g_stopped = false;  // the thread acknowledged it
void unload_round(const JitOptions& options) {
  runtime::VM& vm = runtime::VM::get();
  for (size_t i = 0; i < vm.method_count(); i++) {
    runtime::Method* m = vm.method(i);
    if (m->compiled.load(std::memory_order_acquire) == nullptr) continue;  // not hot (yet)
    if (const runtime::CompiledCode* old = recompile_and_install(m, options)) runtime::retire_code(old, &free_compiled_code);
  }
  runtime::run_at_safepoint([] { runtime::free_unreferenced_code(); });
}

void loop(StressUnloadOptions options) {
  std::unique_lock<std::mutex> lock(g_mutex);
  while (!g_cv.wait_for(lock, std::chrono::nanoseconds(options.period_ns), [] { return g_stop; })) {
    lock.unlock();
    unload_round(options.jit);
    lock.lock();
  }
  g_stopped = true;
  g_cv.notify_all();
}

// At exit: stop between rounds. A bounded wait: the program may be ending from a thread
// that is in the VM, which a round's safepoint would wait for.
void stop() {
  std::unique_lock<std::mutex> lock(g_mutex);
  g_stop = true;
  g_cv.notify_all();
  g_cv.wait_for(lock, std::chrono::seconds(1), [] { return g_stopped; });
}

}  // namespace

void start_stress_unload(const StressUnloadOptions& options) {
  runtime::add_exit_hook(&stop);
  std::thread(loop, options).detach();
}

}  // namespace jit
