// The poll machinery: arming a thread's poll word makes its next poll trap, the
// safepoint blob calls the VM in ordinary context with a walkable stack, and the
// thread continues with the right result.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <catch2/catch.hpp>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/poll.h"
#include "runtime/stack_walker.h"
#include "runtime/thread.h"
#include "tests/unit/vm_fixture.h"

using namespace fixtures;
using namespace runtime;

namespace {

// Records what each poll saw. Runs on the polling thread, in VM state.
class RecordingClient : public PollClient {
 public:
  struct Seen {
    bool on_alt_stack = false;
    ThreadState state = ThreadState::new_thread;
    std::vector<std::string> functions;
    std::vector<int32_t> bcis;
  };
  std::mutex mutex;
  std::vector<Seen> seen;
  std::atomic<uint64_t> count{0};

  void on_poll(Thread* t) override {
    Seen s;
    stack_t ss;
    sigaltstack(nullptr, &ss);
    s.on_alt_stack = (ss.ss_flags & SS_ONSTACK) != 0;
    s.state = t->get_state();
    StackWalker w(t);
    Frame f;
    while (w.next(f)) {
      if (s.functions.size() < 8) {
        s.functions.push_back(f.method->function->name);
        s.bcis.push_back(f.bci);
      }
    }
    std::lock_guard<std::mutex> lock(mutex);  // a mutex: we are not in a signal handler
    seen.push_back(std::move(s));
    count.fetch_add(1);
  }
};

struct ClientScope {
  PollClient* c;
  explicit ClientScope(PollClient* c) : c(c) { register_poll_client(c); }
  ~ClientScope() { unregister_poll_client(c); }
};

void set_stop(int64_t v) { __atomic_store_n(&fixture_vm().globals()[0], v, __ATOMIC_SEQ_CST); }

}  // namespace

TEST_CASE("poll: an armed poll in a running interpreter loop reaches the VM in ordinary context") {
  VM& vm = fixture_vm();
  RecordingClient client;
  ClientScope scope(&client);
  set_stop(0);
  int64_t n = 1000;
  Thread* t = vm.start_thread(vm.method(kBusy), &n);
  while (t->get_state() != ThreadState::in_java) std::this_thread::yield();
  for (int i = 0; i < 20; i++) {
    uint64_t before = client.count.load();
    arm_poll(t);
    while (client.count.load() == before) std::this_thread::yield();
  }
  set_stop(1);
  vm.join_thread(t);
  REQUIRE(t->result == 499500);
  REQUIRE(client.seen.size() >= 20);
  for (auto& s : client.seen) {
    CHECK_FALSE(s.on_alt_stack);
    CHECK(s.state == ThreadState::in_vm);
    REQUIRE(!s.functions.empty());
    // The top frame is a loop latch or a return of sum_to, or busy's latch.
    CHECK((s.functions[0] == "sum_to" || s.functions[0] == "busy"));
    CHECK(s.functions.back() == "busy");
  }
  REQUIRE_FALSE(poll_armed(t));
}

TEST_CASE("poll: many threads armed and disarmed concurrently lose no poll") {
  VM& vm = fixture_vm();
  constexpr int kThreads = 8;
  constexpr int kArms = 100000;
  // requested[k] counts arms of thread k; a poll records the count it has seen, after
  // its own disarm. An arm that never leads to a poll leaves observed < requested.
  static std::atomic<uint64_t> requested[kThreads], observed[kThreads], polls[kThreads];
  struct Counter : PollClient {
    std::map<Thread*, int> index;
    void on_poll(Thread* t) override {
      int k = index.at(t);
      observed[k].store(requested[k].load());
      polls[k].fetch_add(1);
    }
  } client;
  std::vector<Thread*> threads;
  set_stop(0);
  int64_t arg = 200;
  for (int i = 0; i < kThreads; i++) {
    requested[i] = observed[i] = polls[i] = 0;
    Thread* t = vm.start_thread(vm.method(kBusy), &arg);
    threads.push_back(t);
    client.index[t] = i;
  }
  ClientScope scope(&client);
  for (Thread* t : threads)
    while (t->get_state() != ThreadState::in_java) std::this_thread::yield();

  for (int i = 0; i < kArms; i++) {
    int k = i % kThreads;
    requested[k].fetch_add(1);
    arm_poll(threads[k]);
    if (i % 64 == 0) std::this_thread::yield();
  }
  // Every request must be seen by a poll while the threads still run.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (int k = 0; k < kThreads; k++)
    while (observed[k].load() != requested[k].load() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
  set_stop(1);
  uint64_t total = 0;
  for (int k = 0; k < kThreads; k++) {
    vm.join_thread(threads[k]);
    CHECK(observed[k].load() == requested[k].load());
    CHECK(polls[k].load() > 0);
    CHECK(threads[k]->result == 19900);
    total += requested[k].load();
  }
  REQUIRE(total == uint64_t(kArms));
}

TEST_CASE("poll: a poll on the way out of a deep recursion") {
  VM& vm = fixture_vm();
  // depth() has no loops: its only polls are at its returns. The poll is armed before
  // the thread starts, so the first trap is the deepest return; the client re-arms the
  // poll from the handler, so each of the next returns traps too, frame by frame.
  struct Unwinding : PollClient {
    std::vector<size_t> frames;
    std::vector<bool> at_vret;
    const vm::Function* fn = nullptr;
    void on_poll(Thread* t) override {
      StackWalker w(t);
      Frame f;
      size_t n = 0;
      bool top_vret = false;
      while (w.next(f)) {
        if (n == 0) top_vret = f.method->function == fn && vm::Op(fn->code[size_t(f.bci)]) == vm::Op::vret;
        n++;
      }
      frames.push_back(n);
      at_vret.push_back(top_vret);
      if (frames.size() < 2000) arm_poll(t);
    }
  } client;
  client.fn = vm.module().functions[kDepth].get();
  ClientScope scope(&client);
  int64_t n = 100000;
  Thread* t = vm.start_thread(vm.method(kDepth), &n, /*poll_armed=*/true);
  vm.join_thread(t);
  REQUIRE(t->result == 100000);
  REQUIRE(client.frames.size() == 2000);
  CHECK(client.frames[0] == 100001);  // depth(100000) .. depth(0)
  for (size_t i = 0; i < client.frames.size(); i++) {
    CHECK(client.at_vret[i]);
    if (i > 0) CHECK(client.frames[i] == client.frames[i - 1] - 1);  // one frame fewer per return
  }
}
