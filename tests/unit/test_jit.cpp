// The baseline JIT on hand-built bytecode: poll tables, debug info, frames, and compiled
// code reaching the VM at its polls.
#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "jit/baseline_compiler.h"
#include "runtime/poll.h"
#include "runtime/stack_walker.h"
#include "tests/unit/vm_fixture.h"

using namespace fixtures;
using namespace runtime;

namespace {

// Runs `fn` with its entry switched to compiled code, then restores the interpreter.
int64_t run_compiled(size_t fn, int64_t arg, const jit::JitOptions& options = {}) {
  Method* m = fixture_vm().method(fn);
  void* interp_entry = m->entry.load();
  m->entry.store(reinterpret_cast<void*>(jit::compile_method(m, options)->begin));
  int64_t r = run1(fn, arg);
  m->entry.store(interp_entry);
  return r;
}

size_t count_polls_at(const CompiledCode* c, size_t bci) {
  size_t n = 0;
  for (auto& p : c->polls) {
    const PcDesc& d = c->desc_at(p.pc);
    if (d.safepoint && c->scopes[d.scope_begin].bci == int32_t(bci)) n++;
  }
  return n;
}

}  // namespace

TEST_CASE("jit: compiled code computes what the interpreter computes") {
  REQUIRE(run_compiled(kSumTo, 1000) == 499500);
  REQUIRE(run_compiled(kCountSum, 1000) == 499500);
  REQUIRE(run_compiled(kFib, 20) == 6765);
  REQUIRE(run_compiled(kDepth, 30000) == 30000);
}

TEST_CASE("jit: a while loop polls at its header, a counted loop only at its strip-mined latch, every return polls") {
  VM& vm = fixture_vm();
  const vm::Function& sum_to = *vm.module().functions[kSumTo];
  const vm::Function& count_sum = *vm.module().functions[kCountSum];
  CompiledCode* w = jit::compile_method(vm.method(kSumTo), {});
  CompiledCode* c = jit::compile_method(vm.method(kCountSum), {});
  jit::JitOptions with_polls;
  with_polls.counted_loop_polls = true;
  CompiledCode* cp = jit::compile_method(vm.method(kCountSum), with_polls);
  jit::JitOptions no_strip;
  no_strip.strip_mining_iters = 0;
  CompiledCode* cn = jit::compile_method(vm.method(kCountSum), no_strip);

  REQUIRE(w->polls.size() == 2);
  CHECK(count_polls_at(w, sum_to.loops[0].header_bci) == 1);
  CHECK(count_polls_at(w, sum_to.code.size() - 1) == 1);  // the vret
  REQUIRE(c->polls.size() == 2);
  CHECK(count_polls_at(c, count_sum.loops[0].header_bci) == 0);
  CHECK(count_polls_at(c, count_sum.loops[0].latch_bci) == 1);  // once every strip_mining_iters
  CHECK(count_polls_at(c, count_sum.code.size() - 1) == 1);
  REQUIRE(cn->polls.size() == 1);  // --strip-mining=0: nothing inside the loop
  CHECK(count_polls_at(cn, count_sum.code.size() - 1) == 1);
  REQUIRE(cp->polls.size() == 2);  // a header poll replaces the strip poll
  CHECK(count_polls_at(cp, count_sum.loops[0].header_bci) == 1);
  CHECK(count_polls_at(cp, count_sum.loops[0].latch_bci) == 0);
  // Every poll is a branch poll whose `ja` goes to its stub, and the stub's first pc is
  // described as the poll is: same scope and bci, same frame (a thread interrupted there,
  // still in Java, is sampled at the poll).
  for (auto* code : {w, c, cp, cn})
    for (auto& p : code->polls) {
      CHECK(std::memcmp(reinterpret_cast<const void*>(p.pc), kPollBranchInsn, sizeof kPollBranchInsn) == 0);
      CHECK(p.resume_pc == p.pc + kPollBranchLength);
      int32_t rel;
      std::memcpy(&rel, reinterpret_cast<const void*>(p.pc + 2), 4);
      CHECK(p.resume_pc + uintptr_t(intptr_t(rel)) == p.stub);
      REQUIRE(code->contains(p.stub));
      const PcDesc& at_poll = code->desc_at(p.pc);
      const PcDesc& at_stub = code->desc_at(p.stub);
      CHECK(at_stub.safepoint);
      CHECK(code->scopes[at_stub.scope_begin].method == code->scopes[at_poll.scope_begin].method);
      CHECK(code->scopes[at_stub.scope_begin].bci == code->scopes[at_poll.scope_begin].bci);
      CHECK(at_stub.scope_count == at_poll.scope_count);
      CHECK(code->frame_row_at(p.stub)->same_shape(*code->frame_row_at(p.pc)));
    }
}

TEST_CASE("jit: a recursive method is inlined into itself once, and its calls of itself are direct calls to its own entry") {
  VM& vm = fixture_vm();
  CompiledCode* fib = jit::compile_method(vm.method(kFib), {});
  // `call rel32` (E8) whose target is the code's first byte: fib(n - 1) and fib(n - 2)
  // are inlined, and each inlined body calls fib(n - 2) and fib(n - 3) (or n - 3, n - 4).
  int direct_self_calls = 0;
  const auto* code = reinterpret_cast<const uint8_t*>(fib->begin);
  for (uintptr_t i = 0; i + 5 <= fib->end - fib->begin; i++) {
    if (code[i] != 0xE8) continue;
    int32_t rel;
    std::memcpy(&rel, code + i + 1, 4);
    if (fib->begin + i + 5 + uintptr_t(intptr_t(rel)) == fib->begin) direct_self_calls++;
  }
  CHECK(direct_self_calls == 4);
  // Pcs of the inlined bodies map to [fib@bci, fib@call_bci].
  size_t inlined_pcs = 0;
  for (const auto& d : fib->pc_descs)
    inlined_pcs += d.scope_count == 2 && fib->scopes[d.scope_begin].method == vm.method(kFib) &&
                   fib->scopes[d.scope_begin + 1].method == vm.method(kFib);
  CHECK(inlined_pcs > 0);
  REQUIRE(run_compiled(kFib, 25) == 75025);
}

TEST_CASE("jit: debug info covers every pc with a valid bci") {
  VM& vm = fixture_vm();
  for (size_t fn : {kSumTo, kFib, kDepth, kBusy, kCountSum}) {
    CompiledCode* code = jit::compile_method(vm.method(fn), {});
    REQUIRE(code->pc_descs.front().pc_offset == 0);
    uint32_t size = uint32_t(vm.method(fn)->code_size);
    for (uintptr_t pc = code->begin; pc < code->end; pc++) {
      const PcDesc& d = code->desc_at(pc);
      REQUIRE(d.scope_count >= 1);
      const Scope& s = code->scopes[d.scope_begin];
      REQUIRE(s.method == vm.method(fn));
      REQUIRE(s.bci >= 0);
      REQUIRE(uint32_t(s.bci) < size);
    }
    CHECK(code->frame_complete_offset > 0);
  }
}

TEST_CASE("jit: --debug-info=safepoints keeps entries only at polls and calls") {
  jit::JitOptions opts;
  opts.safepoint_debug_info = true;
  CompiledCode* code = jit::compile_method(fixture_vm().method(kFib), opts);
  CompiledCode* full = jit::compile_method(fixture_vm().method(kFib), {});
  CHECK(code->pc_descs.size() < full->pc_descs.size());
  for (size_t i = 1; i < code->pc_descs.size(); i++) CHECK(code->pc_descs[i].safepoint);
}

TEST_CASE("jit: an armed poll in a compiled loop walks compiled frames") {
  VM& vm = fixture_vm();
  struct Walk : PollClient {
    std::atomic<int> seen{0};
    std::atomic<bool> ok{true};
    void on_poll(Thread* t) override {
      StackWalker w(t);
      Frame f;
      int n = 0;
      std::string last;
      while (w.next(f)) {
        if (f.kind != FrameKind::jit) ok = false;
        last = f.method->function->name;
        n++;
      }
      if (n < 1 || last != "busy") ok = false;
      seen++;
    }
  } client;
  register_poll_client(&client);
  Method* busy = vm.method(kBusy);
  Method* sum_to = vm.method(kSumTo);
  void* interp_entry = busy->entry.load();
  busy->entry.store(reinterpret_cast<void*>(jit::compile_method(busy, {})->begin));
  sum_to->entry.store(reinterpret_cast<void*>(jit::compile_method(sum_to, {})->begin));
  __atomic_store_n(&vm.globals()[0], 0, __ATOMIC_SEQ_CST);
  int64_t n = 300;
  Thread* t = vm.start_thread(busy, &n);
  while (t->get_state() != ThreadState::in_java) std::this_thread::yield();
  for (int i = 0; i < 200; i++) {
    int before = client.seen.load();
    arm_poll(t);
    while (client.seen.load() == before) std::this_thread::yield();
  }
  __atomic_store_n(&vm.globals()[0], 1, __ATOMIC_SEQ_CST);
  vm.join_thread(t);
  unregister_poll_client(&client);
  busy->entry.store(interp_entry);
  sum_to->entry.store(interp_entry);
  CHECK(t->result == 44850);
  CHECK(client.ok.load());
}

TEST_CASE("jit: a poll inside an inlined loop shows the inlined frame with its own bci") {
  VM& vm = fixture_vm();
  struct Walk : PollClient {
    std::vector<std::vector<std::pair<std::string, FrameKind>>> walks;
    void on_poll(Thread* t) override {
      StackWalker w(t);
      Frame f;
      std::vector<std::pair<std::string, FrameKind>> frames;
      while (w.next(f)) frames.push_back({f.method->function->name, f.kind});
      walks.push_back(frames);
      if (walks.size() < 50) arm_poll(t);
    }
  } client;
  register_poll_client(&client);
  Method* outer = vm.method(kOuter);
  void* interp_entry = outer->entry.load();
  CompiledCode* code = jit::compile_method(outer, {});
  outer->entry.store(reinterpret_cast<void*>(code->begin));
  int64_t n = 100000;
  Thread* t = vm.start_thread(outer, &n, /*poll_armed=*/true);
  vm.join_thread(t);
  unregister_poll_client(&client);
  outer->entry.store(interp_entry);
  CHECK(t->result == 4999950001);
  REQUIRE(client.walks.size() == 50);
  for (auto& frames : client.walks) {
    REQUIRE(frames.size() == 2);
    CHECK(frames[0].first == "sum_to_inl");
    CHECK(frames[0].second == FrameKind::inlined);
    CHECK(frames[1].first == "outer");
    CHECK(frames[1].second == FrameKind::jit);
  }
  // Its debug info has two-scope chains.
  bool chained = false;
  for (auto& d : code->pc_descs) chained |= d.scope_count == 2;
  CHECK(chained);
}
