#include "runtime/vm.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "runtime/classes.h"
#include "runtime/closures.h"
#include "runtime/errors.h"
#include "runtime/heap.h"
#include "runtime/invariant.h"
#include "runtime/poll.h"
#include "runtime/signals.h"
#include "runtime/strings.h"
#include "runtime/stubs.h"

namespace runtime {

namespace {
// Room kept below the method-entry limit for the runtime to report a stack overflow
// (formatting a trace, printing) on the overflowing thread itself.
constexpr size_t kStackReserveBytes = 256 * 1024;
constexpr size_t kGuardBytes = 64 * 1024;
}  // namespace

VM& VM::get() {
  static VM vm;
  return vm;
}

void VM::init(const VMOptions& options) {
  static bool initialized = false;  // once per process; tests call it repeatedly
  if (initialized) return;
  initialized = true;
  options_ = options;
  install_signal_handlers();
  init_heap(options.heap_bytes);
  generate_runtime_stubs();
}

void VM::load(std::unique_ptr<vm::Module> module) {
  // Replacing a module is for tests, between runs: no thread may be running Mini code.
  methods_.clear();
  method_table_.clear();
  constant_slots_.clear();
  verify_infos_.clear();
  globals_.clear();
  module_ = std::move(module);
  // String literals become permanent strings here, so a slot never holds a string index.
  make_short_strings();
  for (auto& g : module_->globals)
    globals_.push_back(g.init_is_string ? reinterpret_cast<int64_t>(permanent_string(g.init_text)) : g.init_bits);
  if (globals_.empty()) globals_.push_back(0);  // keep data() non-null
  for (auto& fn : module_->functions) {
    auto info = std::make_unique<vm::VerifyInfo>();
    vm::VerifyError error;
    if (!vm::verify_function(*module_, *fn, error, *info)) {
      std::fprintf(stderr, "minivm: internal error: %s does not verify at bci %u: %s\n", fn->name.c_str(), error.bci,
                   error.message.c_str());
      std::exit(2);
    }
    auto m = std::make_unique<Method>();
    m->code = fn->code.data();
    std::vector<int64_t> slots;
    for (auto& c : fn->constants)
      slots.push_back(c.type == vm::Type::String ? reinterpret_cast<int64_t>(permanent_string(fn->strings[size_t(c.bits)]))
                                                 : c.bits);
    constant_slots_.push_back(std::move(slots));
    m->constants = constant_slots_.back().data();
    m->param_count = fn->param_count();
    m->extra_locals = uint16_t(fn->local_count() - fn->param_count());
    m->max_stack = fn->max_stack;
    m->index = fn->index;
    // Locals, the fixed part, return pc and saved rbp, the expression stack, plus the
    // slack a template may use below the stack (runtime-call alignment).
    m->frame_bytes = 8u * (uint32_t(fn->local_count()) + 3 + 2 + fn->max_stack) + 64;
    m->code_size = uint32_t(fn->code.size());
    m->function = fn.get();
    m->verified = info.get();
    verify_infos_.push_back(std::move(info));
    method_table_.push_back(m.get());
    methods_.push_back(std::move(m));
  }
  // A top-level function named as a value is its permanent value, once every Method* exists.
  for (size_t i = 0; i < module_->functions.size(); i++) {
    const auto& constants = module_->functions[i]->constants;
    for (size_t k = 0; k < constants.size(); k++)
      if (vm::type_kind(constants[k].type) == vm::TypeKind::Function)
        constant_slots_[i][k] = reinterpret_cast<int64_t>(function_value(uint32_t(constants[k].bits)));
  }
  load_classes(*module_, method_table_.data());
}

void VM::set_engine(const ExecutionEngine& engine) {
  engine_ = engine;
  for (auto& m : methods_) m->entry.store(engine.method_entry, std::memory_order_release);
}

void VM::attach_current(Thread* t) {
  Thread::set_current(t);
  if (thread_hook_ != nullptr) thread_hook_(t, true);
  t->tid.store(int(gettid()), std::memory_order_release);
  install_alt_signal_stack();
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* addr = nullptr;
    size_t size = 0;
    size_t guard = 0;
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_getguardsize(&attr, &guard);
    pthread_attr_destroy(&attr);
    t->stack_low = reinterpret_cast<uintptr_t>(addr);
    t->stack_high = t->stack_low + size;
    t->guard_low = t->stack_low - guard;
  }
  t->core.stack_limit = t->stack_low + kStackReserveBytes;
  t->core.globals = globals_.data();
  t->core.methods = method_table_.data();
  t->core.dispatch_table = engine_.dispatch_table;
  size_t max_locals = 1;
  for (auto& m : methods_) max_locals = std::max<size_t>(max_locals, m->param_count + m->extra_locals);
  t->osr_buffer.assign(max_locals, 0);
  t->core.osr_buffer = t->osr_buffer.data();
  size_t sites = module_ != nullptr ? module_->slowdown_sites : 0;
  if (t->slowdown_passes.size() != sites) t->slowdown_passes.assign(sites, 0);  // a thread of a test's own
  t->core.slowdown_passes = t->slowdown_passes.data();
}

void VM::detach_current(Thread* t) {
  t->tid.store(0, std::memory_order_release);
  if (thread_hook_ != nullptr) thread_hook_(t, false);
  stack_t ss, old;
  memset(&ss, 0, sizeof ss);
  ss.ss_flags = SS_DISABLE;
  if (sigaltstack(&ss, &old) == 0 && old.ss_sp != nullptr) free(old.ss_sp);
  Thread::set_current(nullptr);
}

static void* thread_main(void* arg) {
  auto* t = static_cast<Thread*>(arg);
  VM& vm = VM::get();
  vm.attach_current(t);
  transition_to_java(t);  // from new_thread: not while a safepoint is pending
  t->result = call_mini(t, t->start_method, t->start_args.data());
  // Still in Java, so no collection is walking the heap.
  MVM_ASSERT(t->get_state() == ThreadState::in_java, "a thread leaves its first Mini frame in Java");
  retire_tlab(t);
  t->set_state(ThreadState::terminated);
  vm.detach_current(t);
  {
    std::lock_guard<std::mutex> lock(t->done_mutex);
    t->done = true;
  }
  t->done_cv.notify_all();
  return nullptr;
}

Thread* VM::start_thread(Method* m, const int64_t* args, bool poll_armed) {
  Thread* t;
  {
    std::lock_guard<std::mutex> lock(threads_mutex_);
    threads_.push_back(std::make_unique<Thread>());
    t = threads_.back().get();
    t->id = int(threads_.size() - 1);
    // Sized before the thread is in the list others read (slowdown_passes), and never again.
    t->slowdown_passes.assign(module_ != nullptr ? module_->slowdown_sites : 0, 0);
  }
  t->start_method = m;
  t->start_args.assign(args, args + m->param_count);
  if (poll_armed) arm_poll(t);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, options_.thread_stack_bytes);
  pthread_attr_setguardsize(&attr, kGuardBytes);
  // Detached: whoever waits for a thread waits on its done flag (join_thread), which
  // any number of joiners may do.
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  int rc = pthread_create(&t->pthread, &attr, thread_main, t);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    Thread* self = Thread::current();
    std::string msg = std::string("cannot start a thread: ") + strerror(rc);
    if (self != nullptr) throw_runtime_error(self, msg);
    std::fprintf(stderr, "error: %s\n", msg.c_str());
    exit_vm(1);
  }
  return t;
}

Thread* VM::thread_by_handle(int64_t handle) {
  std::lock_guard<std::mutex> lock(threads_mutex_);
  if (handle < 1 || handle >= int64_t(threads_.size())) return nullptr;
  return threads_[size_t(handle)].get();
}

std::vector<uint64_t> VM::slowdown_passes() {
  std::vector<uint64_t> total(module_ != nullptr ? module_->slowdown_sites : 0, 0);
  for (Thread* t : threads()) {
    // Another thread may be adding to its counters: read each one whole, as x86 stores it.
    for (size_t k = 0; k < total.size() && k < t->slowdown_passes.size(); k++)
      total[k] += std::atomic_ref<uint64_t>(t->slowdown_passes[k]).load(std::memory_order_relaxed);
  }
  return total;
}

std::vector<Thread*> VM::threads() {
  std::lock_guard<std::mutex> lock(threads_mutex_);
  std::vector<Thread*> out;
  for (auto& t : threads_) out.push_back(t.get());
  return out;
}

void VM::join_thread(Thread* t) {
  std::unique_lock<std::mutex> lock(t->done_mutex);
  t->done_cv.wait(lock, [&] { return t->done; });
}

int64_t VM::run(Method* m, const int64_t* args) {
  Thread* t = start_thread(m, args);
  join_thread(t);
  return t->result;
}

int64_t VM::run_main() {
  Method* main = method(module_->main_index);
  Thread* t = start_thread(main, nullptr);
  // Like Java's non-daemon threads, the program ends when every thread has ended.
  for (size_t i = 0;; i++) {
    Thread* w;
    {
      std::lock_guard<std::mutex> lock(threads_mutex_);
      if (i >= threads_.size()) break;
      w = threads_[i].get();
    }
    join_thread(w);
  }
  bool returns_int = module_->functions[module_->main_index]->result == vm::Type::Int;
  return returns_int ? t->result : 0;
}

bool VM::is_method(const Method* m) const {
  for (const auto& own : methods_)
    if (own.get() == m) return true;
  return false;
}

const Method* VM::method_containing(const uint8_t* bcp) const {
  for (const auto& m : methods_)
    if (m->holds(bcp)) return m.get();
  return nullptr;
}

}  // namespace runtime
