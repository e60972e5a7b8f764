#include "jit/tiered.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "runtime/invariant.h"
#include "runtime/thread.h"
#include "runtime/tiering.h"

namespace jit {

using runtime::CompiledCode;
using runtime::Method;

namespace {

std::mutex g_install_mutex;
std::atomic<uint64_t> g_compilations{0};
std::atomic<bool> g_print{false};

class TieredPolicy : public runtime::TierPolicy {
 public:
  explicit TieredPolicy(const TieredOptions& options) : options_(options) {
    if (!options_.synchronous) std::thread([this] { compiler_loop(); }).detach();
  }

  void on_hot_method(runtime::Thread*, Method* m) override { request(m); }

  void* on_hot_backedge(runtime::Thread*, Method* m, uint32_t target_bci) override {
    const CompiledCode* code = m->compiled.load(std::memory_order_acquire);
    if (code == nullptr) {
      request(m);
      code = m->compiled.load(std::memory_order_acquire);  // set already when synchronous
    }
    if (code == nullptr) return nullptr;
    uintptr_t entry = code->osr_entry_for(target_bci);
    if (entry != 0 && g_print.load(std::memory_order_relaxed))
      std::fprintf(stderr, "[jit] OSR into %s at bci %u (line %u)\n", m->function->name.c_str(), target_bci,
                   m->function->line_at(target_bci));
    return reinterpret_cast<void*>(entry);
  }

 private:
  void request(Method* m) {
    if (m->compiled.load(std::memory_order_acquire) != nullptr) return;
    if (options_.synchronous) {
      compile_and_install(m, options_.jit);
      return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!queued_.insert(m).second) return;  // already waiting
    queue_.push_back(m);
    cv_.notify_one();
  }

  // The background compiler thread: not a Mini thread, never in a Mini stack walk.
  void compiler_loop() {
    MVM_ASSERT(runtime::Thread::current() == nullptr, "the background compiler is not a Mini thread");
    for (;;) {
      Method* m;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return !queue_.empty(); });
        m = queue_.front();
        queue_.pop_front();
      }
      compile_and_install(m, options_.jit);
    }
  }

  TieredOptions options_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Method*> queue_;
  std::unordered_set<Method*> queued_;
};

}  // namespace

const CompiledCode* compile_and_install(Method* m, const JitOptions& options) {
  std::lock_guard<std::mutex> lock(g_install_mutex);  // one compilation per method
  if (const CompiledCode* done = m->compiled.load(std::memory_order_acquire)) return done;
  auto start = std::chrono::steady_clock::now();
  CompiledCode* code = compile_method(m, options);
  if (g_print.load(std::memory_order_relaxed)) {
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "[jit] compiled %s: %zu bytes, %zu polls, %zu OSR entries, %.0f us\n",
                 m->function->name.c_str(), size_t(code->end - code->begin), code->polls.size(),
                 code->osr_entries.size(), us);
  }
  // Publish the code before the entry: whoever sees the new entry may look it up.
  m->compiled.store(code, std::memory_order_release);
  m->entry.store(reinterpret_cast<void*>(code->begin), std::memory_order_release);
  g_compilations.fetch_add(1, std::memory_order_relaxed);
  return code;
}

const CompiledCode* recompile_and_install(Method* m, const JitOptions& options) {
  std::lock_guard<std::mutex> lock(g_install_mutex);
  const CompiledCode* old = m->compiled.load(std::memory_order_acquire);
  MVM_ASSERT(old != nullptr, "only compiled code is recompiled: the caller retires what this returns");
  CompiledCode* code = compile_method(m, options);
  m->compiled.store(code, std::memory_order_release);  // the new code first, as above
  m->entry.store(reinterpret_cast<void*>(code->begin), std::memory_order_release);
  return old;
}

void set_print_compilation(bool on) { g_print.store(on); }

void enable_tiering(const TieredOptions& options) {
  set_print_compilation(options.print_compilation);
  static TieredPolicy* policy = new TieredPolicy(options);  // lives for the process
  runtime::set_tier_policy(policy, runtime::TierThresholds{options.invocation_threshold, options.backedge_threshold});
}

uint64_t tiered_compilations() { return g_compilations.load(std::memory_order_relaxed); }

}  // namespace jit
