#include "runtime/code_unloading.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <mutex>

#include "runtime/clock.h"
#include "runtime/code_blob.h"
#include "runtime/compiled_code.h"
#include "runtime/invariant.h"
#include "runtime/safepoint.h"
#include "runtime/stack_walker.h"
#include "runtime/thread.h"
#include "runtime/vm.h"

namespace runtime {

namespace {

// The freed-code log: chunks allocated as needed and never freed, so a signal handler can
// read any published entry without a lock. Only free_unreferenced_code appends (one
// safepoint at a time); the count is published after the entry.
constexpr uint64_t kChunkEntries = 4096;
constexpr uint64_t kChunks = 4096;  // 16M frees; later ones go unlogged
std::atomic<FreedCode*> g_chunks[kChunks];
std::atomic<uint64_t> g_freed_count{0};
// Every logged range lies in [g_low, g_high): most pcs are rejected without a scan.
std::atomic<uintptr_t> g_low{UINTPTR_MAX}, g_high{0};

struct Retired {
  const CompiledCode* code;
  CodeFreer freer;
};

std::mutex g_mutex;  // the retired list, the clients and the totals
std::vector<Retired> g_retired;
std::vector<CodeRootClient*> g_clients;
UnloadTotals g_totals;

const FreedCode& entry(uint64_t seq) {
  return g_chunks[seq / kChunkEntries].load(std::memory_order_acquire)[seq % kChunkEntries];
}

void log_freed(const CompiledCode& code) {
  uint64_t seq = g_freed_count.load(std::memory_order_relaxed);
  if (seq / kChunkEntries >= kChunks) return;
  std::atomic<FreedCode*>& chunk = g_chunks[seq / kChunkEntries];
  if (chunk.load(std::memory_order_relaxed) == nullptr) chunk.store(new FreedCode[kChunkEntries], std::memory_order_release);
  chunk.load(std::memory_order_relaxed)[seq % kChunkEntries] = FreedCode{code.begin, code.end, code.method, seq, monotonic_ns()};
  if (code.begin < g_low.load(std::memory_order_relaxed)) g_low.store(code.begin, std::memory_order_relaxed);
  if (code.end > g_high.load(std::memory_order_relaxed)) g_high.store(code.end, std::memory_order_relaxed);
  g_freed_count.store(seq + 1, std::memory_order_release);
}

}  // namespace

uint64_t freed_code_count() { return g_freed_count.load(std::memory_order_acquire); }

FreedCode freed_code(uint64_t seq) { return entry(seq); }

bool pc_freed_since(uintptr_t pc, uint64_t since) {
  uint64_t n = g_freed_count.load(std::memory_order_acquire);
  for (uint64_t i = since; i < n; i++) {
    const FreedCode& f = entry(i);
    if (pc >= f.begin && pc < f.end) return true;
  }
  return false;
}

bool pc_in_freed_code(uintptr_t pc) {
  if (pc < g_low.load(std::memory_order_relaxed) || pc >= g_high.load(std::memory_order_relaxed)) return false;
  return pc_freed_since(pc, 0);
}

void register_code_root_client(CodeRootClient* client) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_clients.push_back(client);
}

void retire_code(const CompiledCode* code, CodeFreer freer) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_retired.push_back({code, freer});
  g_totals.retired++;
}

std::vector<size_t> unreferenced_blobs(const std::vector<const CodeBlob*>& retired, std::vector<uintptr_t> pcs) {
  std::sort(pcs.begin(), pcs.end());
  std::vector<size_t> out;
  for (size_t i = 0; i < retired.size(); i++) {
    auto first = std::lower_bound(pcs.begin(), pcs.end(), retired[i]->begin);
    if (first == pcs.end() || *first > retired[i]->end) out.push_back(i);
  }
  return out;
}

bool collect_pcs_in_use(std::vector<uintptr_t>& pcs) {
  bool walkable = true;
  for (Thread* t : VM::get().threads()) {
    // Not started or ended: no Mini frames, and an ended thread's anchor may name a
    // stack that is gone.
    ThreadState s = t->get_state();
    if (s == ThreadState::new_thread || s == ThreadState::terminated) continue;
    StackWalker w(t);
    Frame f;
    while (w.next(f)) pcs.push_back(f.pos.pc);
    // A walk that stopped early leaves its deeper frames' code unknown. No anchor means
    // no Mini frames (a thread that has not entered Mini code or has left it for good).
    if (w.stop() != WalkStop::entry && w.stop() != WalkStop::no_anchor) walkable = false;
  }
  std::vector<CodeRootClient*> clients;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    clients = g_clients;
  }
  for (CodeRootClient* c : clients) c->add_pcs_in_use(pcs);
  return walkable;
}

UnloadRound free_unreferenced_code() {
  MVM_ASSERT(safepoint_pending(), "retired code is freed inside a global safepoint operation, every stack stopped");
  UnloadRound round;
  std::vector<uintptr_t> pcs;
  round.walkable = collect_pcs_in_use(pcs);
  std::vector<Retired> to_free;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_totals.rounds++;
    if (!round.walkable) {
      g_totals.unwalkable_rounds++;
      round.kept = g_retired.size();
      return round;
    }
    std::vector<const CodeBlob*> blobs;
    for (const Retired& r : g_retired) blobs.push_back(r.code);
    std::vector<size_t> unused = unreferenced_blobs(blobs, std::move(pcs));
    std::vector<bool> freeing(g_retired.size(), false);
    for (size_t i : unused) freeing[i] = true;
    std::vector<Retired> kept;
    for (size_t i = 0; i < g_retired.size(); i++) (freeing[i] ? to_free : kept).push_back(g_retired[i]);
    g_retired.swap(kept);
    round.freed = to_free.size();
    round.kept = g_retired.size();
    g_totals.freed += round.freed;
    g_totals.kept_in_use += round.kept;
  }
  // Unfindable first, then logged, then the memory goes: a lookup that misses the blob
  // from now on and a pc checked against the log both see it as freed.
  for (const Retired& r : to_free) {
    unregister_blob(r.code);
    log_freed(*r.code);
    r.freer(r.code);
  }
  return round;
}

UnloadTotals unload_totals() {
  std::lock_guard<std::mutex> lock(g_mutex);
  UnloadTotals t = g_totals;
  t.waiting = g_retired.size();
  return t;
}

}  // namespace runtime
