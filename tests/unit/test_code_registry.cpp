// The code registry (runtime/code_registry.cpp): exact lookups at every boundary,
// removal, lookups racing registration and removal (from another thread and from a signal
// handler interrupting the writer), and freeing of retired snapshots.
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "runtime/code_blob.h"

namespace {

using runtime::CodeBlob;
using runtime::find_blob;

// Far above anything this process maps, so fake blobs never shadow real code.
constexpr uintptr_t kBase = uintptr_t(0x3000) << 32;

// n blobs in address order from `base`: sizes 1..64, every other one followed by a gap.
std::vector<std::unique_ptr<CodeBlob>> make_blobs(size_t n, uintptr_t base, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::unique_ptr<CodeBlob>> out;
  uintptr_t at = base;
  for (size_t i = 0; i < n; i++) {
    auto b = std::make_unique<CodeBlob>();
    b->name = "fake" + std::to_string(i);
    b->kind = runtime::BlobKind::compiled;
    b->begin = at;
    b->end = at + 1 + rng() % 64;
    at = b->end + (i % 2 == 0 ? 0 : 1 + rng() % 16);
    out.push_back(std::move(b));
  }
  return out;
}

bool listed(const CodeBlob* b) {
  auto all = runtime::all_blobs();
  return std::find(all.begin(), all.end(), b) != all.end();
}

void unregister_all(const std::vector<std::unique_ptr<CodeBlob>>& blobs) {
  for (auto& b : blobs) runtime::unregister_blob(b.get());
}

// Every pc boundary: begin, end - 1, end (the next blob or nothing), the gap after.
void check_boundaries(const std::vector<std::unique_ptr<CodeBlob>>& blobs) {
  for (size_t i = 0; i < blobs.size(); i++) {
    const CodeBlob* b = blobs[i].get();
    REQUIRE(find_blob(b->begin) == b);
    REQUIRE(find_blob(b->end - 1) == b);
    const CodeBlob* next = i + 1 < blobs.size() && blobs[i + 1]->begin == b->end ? blobs[i + 1].get() : nullptr;
    REQUIRE(find_blob(b->end) == next);
    if (i + 1 < blobs.size() && blobs[i + 1]->begin > b->end) REQUIRE(find_blob(blobs[i + 1]->begin - 1) == nullptr);
  }
  REQUIRE(find_blob(blobs.front()->begin - 1) == nullptr);
}

}  // namespace

TEST_CASE("code registry: blobs registered in random order are found at every boundary", "[registry]") {
  auto blobs = make_blobs(3000, kBase, 1);
  std::vector<const CodeBlob*> order;
  for (auto& b : blobs) order.push_back(b.get());
  std::shuffle(order.begin(), order.end(), std::mt19937(2));
  for (size_t i = 0; i < order.size(); i++) {
    runtime::register_blob(order[i]);
    if (i % 500 == 0) REQUIRE(find_blob(order[i]->begin) == order[i]);
  }
  check_boundaries(blobs);
  // Levels at least double, so a lookup searches at most log2(entries) + 1 of them.
  auto stats = runtime::registry_stats();
  CHECK(stats.levels <= size_t(std::log2(double(stats.live + stats.dead_entries))) + 1);
  auto all = runtime::all_blobs();
  REQUIRE(all.size() >= order.size());
  CHECK(std::equal(order.begin(), order.end(), all.end() - long(order.size())));  // registration order
  unregister_all(blobs);
  for (auto& b : blobs) REQUIRE(find_blob(b->begin) == nullptr);
}

TEST_CASE("code registry: a removed blob is not found, its neighbours are", "[registry]") {
  auto blobs = make_blobs(600, kBase + 0x1000000, 3);
  for (auto& b : blobs) runtime::register_blob(b.get());
  for (size_t i = 1; i < blobs.size(); i += 3) {
    runtime::unregister_blob(blobs[i].get());
    REQUIRE(find_blob(blobs[i]->begin) == nullptr);  // at once
    REQUIRE(find_blob(blobs[i]->end - 1) == nullptr);
    REQUIRE(find_blob(blobs[i - 1]->begin) == blobs[i - 1].get());
    REQUIRE(find_blob(blobs[i + 1]->end - 1) == blobs[i + 1].get());
    CHECK_FALSE(listed(blobs[i].get()));
  }
  std::vector<std::unique_ptr<CodeBlob>> kept, removed;
  for (size_t i = 0; i < blobs.size(); i++) (i % 3 == 1 ? removed : kept).push_back(std::move(blobs[i]));
  for (auto& b : kept) {
    REQUIRE(find_blob(b->begin) == b.get());
    REQUIRE(find_blob(b->end - 1) == b.get());
    REQUIRE(listed(b.get()));
  }
  // New code in the memory of removed code is found, the removed blob is not.
  std::vector<std::unique_ptr<CodeBlob>> reused;
  for (auto& r : removed) {
    auto b = std::make_unique<CodeBlob>();
    b->name = "reused";
    b->kind = runtime::BlobKind::compiled;
    b->begin = r->begin;
    b->end = r->end;
    runtime::register_blob(b.get());
    reused.push_back(std::move(b));
  }
  for (size_t i = 0; i < removed.size(); i++) {
    REQUIRE(find_blob(removed[i]->begin) == reused[i].get());
    REQUIRE(find_blob(removed[i]->end - 1) == reused[i].get());
  }
  unregister_all(kept);
  unregister_all(reused);
  for (auto& r : removed) REQUIRE(find_blob(r->begin) == nullptr);
  for (auto& b : kept) REQUIRE(find_blob(b->begin) == nullptr);
}

namespace {
std::atomic<uintptr_t> g_handler_pc{0};
std::atomic<const CodeBlob*> g_handler_expect{nullptr};
std::atomic<int> g_handler_calls{0}, g_handler_misses{0};
void lookup_in_handler(int) {
  const CodeBlob* b = find_blob(g_handler_pc.load());
  g_handler_calls.fetch_add(1);
  if (b != g_handler_expect.load()) g_handler_misses.fetch_add(1);
}
}  // namespace

TEST_CASE("code registry: lookups racing registration and removal", "[registry]") {
  // Permanent blobs are interleaved with the churning ones, so every merge and rebuild
  // copies them.
  auto blobs = make_blobs(4000, kBase + 0x2000000, 4);
  std::vector<const CodeBlob*> permanent, churn;
  for (size_t i = 0; i < blobs.size(); i++) (i % 8 == 0 ? permanent : churn).push_back(blobs[i].get());
  for (const CodeBlob* b : permanent) runtime::register_blob(b);
  const uintptr_t lo = blobs.front()->begin, hi = blobs.back()->end + 16;

  g_handler_pc = permanent[permanent.size() / 2]->begin;
  g_handler_expect = permanent[permanent.size() / 2];
  struct sigaction sa = {}, old = {};
  sa.sa_handler = lookup_in_handler;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  REQUIRE(sigaction(SIGUSR2, &sa, &old) == 0);

  std::atomic<bool> done{false};
  std::atomic<long> lookups{0}, wrong{0}, lost{0};
  pthread_t writer_thread = pthread_self();
  std::thread reader([&] {
    std::mt19937_64 rng(5);
    long n = 0;
    while (!done.load()) {
      uintptr_t pc = lo + rng() % (hi - lo);
      const CodeBlob* b = find_blob(pc);
      if (b != nullptr && !b->contains(pc)) wrong++;
      const CodeBlob* p = permanent[rng() % permanent.size()];
      if (find_blob(p->begin + rng() % (p->end - p->begin)) != p) lost++;
      // Interrupt the writer in the middle of its writes; the handler looks up too.
      if (++n % 64 == 0) pthread_kill(writer_thread, SIGUSR2);
      lookups += 2;
    }
  });
  // On a loaded machine the reader may start late: the writer waits for it, and churns
  // on (up to 100x longer) until the reader and its signal handler have looked up enough.
  while (lookups.load() == 0) std::this_thread::yield();
  std::mt19937 rng(6);
  std::vector<const CodeBlob*> in;
  auto enough = [&] { return lookups.load() > 1000 && g_handler_calls.load() > 0; };
  for (int round = 0; round < 20 || (!enough() && round < 2000); round++) {
    std::shuffle(churn.begin(), churn.end(), rng);
    for (const CodeBlob* b : churn) {
      runtime::register_blob(b);
      in.push_back(b);
      if (rng() % 3 == 0) {  // remove a random registered one
        size_t k = rng() % in.size();
        runtime::unregister_blob(in[k]);
        in[k] = in.back();
        in.pop_back();
      }
    }
    for (const CodeBlob* b : in) runtime::unregister_blob(b);
    in.clear();
  }
  done = true;
  reader.join();
  sigaction(SIGUSR2, &old, nullptr);
  CHECK(lookups.load() > 1000);
  CHECK(wrong.load() == 0);
  CHECK(lost.load() == 0);
  CHECK(g_handler_calls.load() > 0);
  CHECK(g_handler_misses.load() == 0);
  for (const CodeBlob* b : permanent) REQUIRE(find_blob(b->begin) == b);
  for (const CodeBlob* b : churn) REQUIRE(find_blob(b->begin) == nullptr);
  for (const CodeBlob* b : permanent) runtime::unregister_blob(b);
}

TEST_CASE("code registry: retired snapshots are freed, dead entries dropped", "[registry]") {
  auto blobs = make_blobs(2000, kBase + 0x3000000, 7);
  auto before = runtime::registry_stats();
  for (auto& b : blobs) runtime::register_blob(b.get());
  unregister_all(blobs);
  auto after = runtime::registry_stats();
  // Every registration published a snapshot; with no reader inside find_blob each old one
  // is freed within the next writes, and the last few wait at most two epochs.
  CHECK(after.freed >= before.freed + blobs.size() - 4);
  CHECK(after.retired <= 4);
  CHECK(after.live == before.live);
  // Removal rebuilds once dead entries outnumber live ones: they stay bounded by the live.
  CHECK(after.dead_entries <= std::max<size_t>(after.live, 16));
}
