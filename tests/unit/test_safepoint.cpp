// Global safepoints (runtime/safepoint.h): threads in Java stop at their next poll,
// threads in native code and blocked in a join stay out of Java, a thread that starts
// meanwhile waits, every stopped stack is walkable, and everything resumes afterwards.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "jit/baseline_compiler.h"
#include "runtime/safepoint.h"
#include "runtime/stack_walker.h"
#include "tests/unit/vm_fixture.h"

using namespace fixtures;
using namespace runtime;

namespace {

// The function of the innermost Mini frame a walk from the thread's anchor finds.
std::string top_function(Thread* t) {
  StackWalker w(t);
  Frame f;
  return w.next(f) ? f.method->function->name : "";
}

void run_rounds(const char* mode) {
  INFO(mode);
  VM& vm = fixture_vm();
  for (int g : {0, 1, 2}) set_global(g, 0);  // stop, spins, native_spins
  Thread* native = vm.start_thread(method_named("native_spin"), nullptr);
  Thread* java = vm.start_thread(method_named("spin"), nullptr);  // not the first: handle 0 is main's
  int64_t handle = java->id;
  Thread* joiner = vm.start_thread(method_named("join_one"), &handle);
  wait_until([&] { return global(1) > 0 && global(2) > 0 && joiner->get_state() == ThreadState::blocked; });
  uint64_t before = safepoint_count();
  int late_spinner = -1;  // a second spinner, started inside round 0's safepoint
  for (int round = 0; round < 20; round++) {
    int64_t spins = 0, native_spins = 0;
    SafepointStats stats = run_at_safepoint([&] {
      for (Thread* t : {java, native, joiner}) {
        ThreadState s = t->get_state();
        INFO("thread " << t->id << " " << thread_state_name(s) << " anchor " << t->has_anchor());
        CHECK((s == ThreadState::blocked || s == ThreadState::in_native));
      }
      // Where each one stopped: the spinning thread at its loop's poll, the others in
      // the native call.
      CHECK(top_function(java) == "spin");
      CHECK(top_function(joiner) == "join_one");
      if (native->get_state() == ThreadState::blocked) CHECK(top_function(native) == "native_spin");
      // No Mini code runs: the counters the loops bump in Java stay put, and a thread
      // started now does not begin.
      spins = global(1);
      native_spins = global(2);
      Thread* late = round == 0 ? vm.start_thread(method_named("spin"), nullptr) : nullptr;
      if (late != nullptr) late_spinner = late->id;
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
      CHECK(global(1) == spins);
      CHECK(global(2) == native_spins);
      if (late != nullptr) CHECK(late->get_state() != ThreadState::in_java);
    });
    CHECK(stats.threads >= 3);
    CHECK(stats.operation_ns >= 3'000'000);
    // The one waited for was in Java when its poll was armed, even when its next poll
    // came before the requester first looked: a spinner, or the native spinner caught
    // between two of its 50 us native calls; never the joiner, safe all along.
    CHECK((stats.slowest_thread == java->id || stats.slowest_thread == late_spinner ||
           stats.slowest_thread == native->id));
    CHECK(stats.slowest_thread != joiner->id);
    CHECK(stats.slowest_pc != 0);
    // And afterwards everything runs again. The spinner itself must be back in Java, not
    // only the counter it shares with the late spinner moving: one still waking from this
    // safepoint is safe when the next is armed, and then no thread has to be waited for.
    wait_until([&] {
      return global(1) > spins && global(2) > native_spins && java->get_state() == ThreadState::in_java;
    });
  }
  CHECK(safepoint_count() - before == 20);
  set_global(0, 1);
  vm.join_thread(joiner);
  vm.join_thread(java);
  vm.join_thread(native);
  for (Thread* t : vm.threads()) vm.join_thread(t);  // the late spinner
}

}  // namespace

TEST_CASE("safepoint: threads in Java, in native code and in a join all stop, and resume", "[safepoint]") {
  run_rounds("interpreted");
}

TEST_CASE("safepoint: compiled loops stop at their polls too", "[safepoint]") {
  Method* spin = method_named("spin");
  void* interpreted = spin->entry.load();
  spin->entry.store(reinterpret_cast<void*>(jit::compile_method(spin, {})->begin));
  run_rounds("spin compiled");
  spin->entry.store(interpreted);
}

TEST_CASE("safepoint: two requesters take turns", "[safepoint]") {
  VM& vm = fixture_vm();
  set_global(0, 0);
  set_global(1, 0);
  Thread* java = vm.start_thread(method_named("spin"), nullptr);
  wait_until([&] { return global(1) > 0; });
  std::atomic<int> inside{0}, overlaps{0};
  auto requester = [&] {
    for (int i = 0; i < 50; i++)
      run_at_safepoint([&] {
        if (inside.fetch_add(1) != 0) overlaps++;
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        inside.fetch_sub(1);
      });
  };
  std::thread a(requester), b(requester);
  a.join();
  b.join();
  CHECK(overlaps == 0);
  set_global(0, 1);
  vm.join_thread(java);
}
