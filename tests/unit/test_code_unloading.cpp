// Code unloading (runtime/code_unloading.h): the decision on hand-built blobs and pcs,
// the log and the registry after a free, pending pcs keeping code, and compiled code that
// a thread runs in (at a poll) or will return into (from a native call) kept until the
// thread has left it, then freed and overwritten with int3.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "jit/baseline_compiler.h"
#include "runtime/code_blob.h"
#include "runtime/code_unloading.h"
#include "runtime/compiled_code.h"
#include "runtime/safepoint.h"
#include "runtime/signals.h"
#include "tests/unit/vm_fixture.h"

using namespace fixtures;
using namespace runtime;

namespace {

// Hand-built blobs at addresses no real code uses.
std::unique_ptr<CompiledCode> fake_code(uintptr_t begin, uintptr_t end) {
  auto c = std::make_unique<CompiledCode>();
  c->name = "fake";
  c->kind = BlobKind::compiled;
  c->begin = begin;
  c->end = end;
  return c;
}

// A pending-request stand-in: the pcs it reports are kept.
struct TestRoots : CodeRootClient {
  std::vector<uintptr_t> pcs;
  void add_pcs_in_use(std::vector<uintptr_t>& out) override { out.insert(out.end(), pcs.begin(), pcs.end()); }
};
TestRoots& test_roots() {
  static TestRoots* roots = [] {
    auto* r = new TestRoots();
    register_code_root_client(r);
    return r;
  }();
  return *roots;
}

std::vector<const CompiledCode*> g_freed;  // what the test freer was handed
void record_free(const CompiledCode* c) { g_freed.push_back(c); }

bool freed_now(const CompiledCode* c) {
  for (const CompiledCode* f : g_freed)
    if (f == c) return true;
  return false;
}

UnloadRound unload_at_safepoint() {
  UnloadRound round;
  run_at_safepoint([&] { round = free_unreferenced_code(); });
  return round;
}

struct ReadBytes {
  uintptr_t at;
  size_t n;
  std::vector<uint8_t> out;
};
void read_bytes(void* arg) {
  auto* r = static_cast<ReadBytes*>(arg);
  r->out.resize(r->n);
  std::memcpy(r->out.data(), reinterpret_cast<const void*>(r->at), r->n);
}

}  // namespace

TEST_CASE("unload: a blob is kept while a pc lies in it, its end included", "[unload]") {
  auto a = fake_code(0x100, 0x200), b = fake_code(0x200, 0x300), c = fake_code(0x400, 0x500);
  std::vector<const CodeBlob*> retired{a.get(), b.get(), c.get()};
  CHECK(unreferenced_blobs(retired, {}) == std::vector<size_t>{0, 1, 2});
  CHECK(unreferenced_blobs(retired, {0x150, 0x50, 0x600}) == std::vector<size_t>{1, 2});
  // A return address after a call that ends its blob equals the blob's end.
  CHECK(unreferenced_blobs(retired, {0x300}) == std::vector<size_t>{0, 2});
  CHECK(unreferenced_blobs(retired, {0x200}) == std::vector<size_t>{2});  // end of a, start of b
  CHECK(unreferenced_blobs(retired, {0x4ff, 0x3ff}) == std::vector<size_t>{0, 1});
}

TEST_CASE("unload: retired code named by a pending pc waits, the rest is unregistered and logged", "[unload]") {
  fixture_vm();
  TestRoots& roots = test_roots();
  const uintptr_t base = uintptr_t(0x7e0000000000);
  auto kept = fake_code(base, base + 0x100), freed = fake_code(base + 0x1000, base + 0x1100);
  register_blob(kept.get());
  register_blob(freed.get());
  retire_code(kept.get(), &record_free);
  retire_code(freed.get(), &record_free);
  roots.pcs = {base + 0x80};
  uint64_t log_before = freed_code_count();
  g_freed.clear();

  UnloadRound round = unload_at_safepoint();
  CHECK(round.walkable);
  CHECK(freed_now(freed.get()));
  CHECK_FALSE(freed_now(kept.get()));
  CHECK(find_blob(freed->begin + 4) == nullptr);
  CHECK(find_blob(kept->begin + 4) == kept.get());
  REQUIRE(freed_code_count() == log_before + 1);
  FreedCode entry = freed_code(log_before);
  CHECK(entry.begin == freed->begin);
  CHECK(entry.end == freed->end);
  CHECK(entry.seq == log_before);
  CHECK(pc_freed_since(base + 0x1050, log_before));
  CHECK_FALSE(pc_freed_since(base + 0x1050, log_before + 1));
  CHECK(pc_in_freed_code(base + 0x1050));
  CHECK_FALSE(pc_in_freed_code(base + 0x50));

  // Once nothing names it, it goes too.
  roots.pcs.clear();
  unload_at_safepoint();
  CHECK(freed_now(kept.get()));
  CHECK(find_blob(kept->begin + 4) == nullptr);
  CHECK(pc_in_freed_code(base + 0x50));
}

TEST_CASE("unload: compiled code a thread runs in or returns into is kept until it has left, then poisoned",
          "[unload]") {
  VM& vm = fixture_vm();
  test_roots().pcs.clear();
  Method* spin = method_named("spin");
  Method* native_spin = method_named("native_spin");
  void* spin_interpreted = spin->entry.load();
  void* native_interpreted = native_spin->entry.load();
  CompiledCode* spin_code = jit::compile_method(spin, {});
  CompiledCode* native_code = jit::compile_method(native_spin, {});
  spin->entry.store(reinterpret_cast<void*>(spin_code->begin));
  native_spin->entry.store(reinterpret_cast<void*>(native_code->begin));
  for (int g : {0, 1, 2}) set_global(g, 0);
  Thread* java = vm.start_thread(spin, nullptr);
  Thread* native = vm.start_thread(native_spin, nullptr);
  wait_until([&] { return global(1) > 0 && global(2) > 0; });
  // Replaced: calls go to the interpreter again, but both threads are still in the code.
  spin->entry.store(spin_interpreted);
  native_spin->entry.store(native_interpreted);
  retire_code(spin_code, &jit::free_compiled_code);
  retire_code(native_code, &jit::free_compiled_code);
  uintptr_t spin_begin = spin_code->begin, native_begin = native_code->begin;
  for (int i = 0; i < 5; i++) {
    UnloadRound round = unload_at_safepoint();
    CHECK(round.walkable);
    CHECK(round.kept >= 2);
    CHECK(find_blob(spin_begin) == spin_code);
    CHECK(find_blob(native_begin) == native_code);
  }
  CHECK(global(1) > 0);
  set_global(0, 1);
  vm.join_thread(java);
  vm.join_thread(native);
  uint64_t log_before = freed_code_count();
  UnloadRound round = unload_at_safepoint();
  CHECK(round.freed >= 2);
  CHECK(find_blob(spin_begin) == nullptr);
  CHECK(find_blob(native_begin) == nullptr);
  CHECK(pc_freed_since(spin_begin, log_before));
  CHECK(pc_freed_since(native_begin, log_before));
  // The memory now holds int3 (or, if its block went back to the system, faults).
  ReadBytes r{spin_begin, 16, {}};
  if (protected_call(&read_bytes, &r)) CHECK(r.out == std::vector<uint8_t>(16, 0xCC));
}
