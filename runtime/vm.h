// The VM instance: the loaded module, its Methods and globals, the threads, and the
// entry into Mini code. One per process.
#pragma once
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/method.h"
#include "runtime/thread.h"
#include "vm/bytecode.h"
#include "vm/verifier.h"

namespace runtime {

struct VMOptions {
  size_t heap_bytes = size_t(4) << 30;          // reserved, committed as touched
  size_t thread_stack_bytes = size_t(16) << 20;  // per Mini thread, main included
};

// What an execution engine (the interpreter) provides to run a Method.
struct ExecutionEngine {
  void* method_entry = nullptr;                      // Method::entry for every method
  const void* const* dispatch_table = nullptr;       // loaded into r12 on entry
};

class VM {
 public:
  static VM& get();

  void init(const VMOptions& options);
  void load(std::unique_ptr<vm::Module> module);
  void set_engine(const ExecutionEngine& engine);

  const vm::Module& module() const { return *module_; }
  const VMOptions& options() const { return options_; }
  Method* method(size_t index) { return methods_[index].get(); }
  size_t method_count() const { return methods_.size(); }
  // Lookups for samplers reading a stack they cannot vouch for; async-signal-safe (the
  // method table is fixed once the module is loaded).
  // Whether m is one of the module's methods (HotSpot's Method::is_valid_method).
  bool is_method(const Method* m) const;
  // The method whose bytecode holds bcp, or nullptr.
  const Method* method_containing(const uint8_t* bcp) const;
  int64_t* globals() { return globals_.data(); }

  // Runs main on a new Mini thread, waits for it and for every thread it started, and
  // returns main's int result (0 for a main without one); the exit status is the CLI's.
  int64_t run_main();

  // Runs m(args) on a new Mini thread and returns its result slot (tests, tools).
  int64_t run(Method* m, const int64_t* args);
  // Waits until t has ended.
  void join_thread(Thread* t);
  // Starts a thread running m(args); returns it (its id is the handle). With
  // `poll_armed`, its first poll traps (tests use it to catch a thread early).
  Thread* start_thread(Method* m, const int64_t* args, bool poll_armed = false);
  // The thread with this handle, or nullptr.
  Thread* thread_by_handle(int64_t handle);
  std::vector<Thread*> threads();
  // Per --slowdown site, how many times control passed it, on every thread that ran (a
  // thread still running adds what it has counted so far).
  std::vector<uint64_t> slowdown_passes();

  // Prepares a thread object for running Mini code on the calling OS thread (used by
  // start_thread and by tests that run Mini code on their own thread).
  void attach_current(Thread* t);
  void detach_current(Thread* t);

  // Called on each Mini thread as it starts (true) and ends (false), on that thread;
  // the sampler uses it to set up and retire per-thread state. Set before run_main.
  using ThreadHook = void (*)(Thread* t, bool starting);
  void set_thread_hook(ThreadHook hook) { thread_hook_ = hook; }

 private:
  VMOptions options_;
  std::unique_ptr<vm::Module> module_;
  std::vector<std::unique_ptr<Method>> methods_;
  std::vector<Method*> method_table_;
  std::vector<std::vector<int64_t>> constant_slots_;  // each Method's constants as raw slots
  std::vector<std::unique_ptr<vm::VerifyInfo>> verify_infos_;  // each Method's `verified`
  std::vector<int64_t> globals_;
  ExecutionEngine engine_;
  ThreadHook thread_hook_ = nullptr;
  std::mutex threads_mutex_;
  std::vector<std::unique_ptr<Thread>> threads_;
};

}  // namespace runtime
