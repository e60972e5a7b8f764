// The code registry: which blob holds a pc, answered without locks, so that a signal
// handler on any thread may ask at any time, while other threads register and remove code.
//
// Shape. A snapshot is a short list of levels, newest first; a level is an immutable array
// of entries {begin, end, slot} sorted by begin. A new blob becomes a level of one; while a
// level is more than half as large as the older one after it, the two are merged (cost:
// their sizes). So every level is at least twice the newer one before it, there are at
// most log2(N) + 1 levels, and over N registrations an entry is copied O(log N) times:
// O(N log N) in all. A lookup binary-searches every level: O(log^2 N). Entries carry copies
// of begin and end, so a search never touches a blob's memory.
//
// Removal. Each registration owns a Slot holding the blob pointer; unregistering clears it
// with one atomic store, and a lookup skips entries whose slot is empty. Merges drop dead
// entries; once dead entries outnumber live ones every level is rebuilt into one (O(N),
// paid for by the N/2 removals before it), so removal is O(log N) amortized and memory
// stays proportional to the live blobs. Entries of one level never overlap (a merge keeps
// only blobs alive at that moment, and live blobs do not overlap), so each level's binary
// search is exact; a pc may hit a dead entry in one level and the live blob now at its
// addresses in another, and only the live one answers.
//
// Reclamation (epochs with two reader counters). A write publishes a new snapshot with one
// atomic exchange and retires what the new one no longer reaches: the old header, the
// replaced levels, the slots of dropped entries. A reader reads the epoch, increments
// g_readers[epoch & 1], and only then loads the snapshot; it decrements the same counter
// when done. A writer moves the epoch from e to e + 1 when g_readers[(e + 1) & 1] (the
// counter of epoch e - 1) is zero, and frees what it retired in epoch r once the epoch has
// reached r + 2. By then it has seen both counters at zero after the retiring exchange, and
// every reader that could have loaded the old snapshot had incremented its counter before
// that exchange (all of these are seq_cst operations), so it had also decremented it: it
// was gone. Why this scheme: it needs no registration of threads (handlers run on threads
// the VM never saw), no allocation and no lock in the reader, and the writer never waits
// for readers; it only frees what is already safe and leaves the rest to a later write.
// So a handler that interrupts a writer on the writer's own thread cannot deadlock, and its
// lookup is safe: the writer publishes before it retires and checks the counters before it
// frees, so a handler arriving at any point either loads the new snapshot (which reaches
// nothing being freed) or had incremented its counter before the check (and then the
// writer does not free). A reader stuck inside find_blob (a thread stopped there) only
// delays freeing; writes go on.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <unordered_map>

#include "runtime/code_blob.h"
#include "runtime/invariant.h"

namespace runtime {

namespace {

struct Slot {
  std::atomic<const CodeBlob*> blob;  // nullptr once unregistered
  uint64_t seq;                       // registration order
};
struct Entry {
  uintptr_t begin, end;
  Slot* slot;
};
struct Level {
  std::vector<Entry> entries;  // sorted by begin; never changed once published
};
constexpr size_t kMaxLevels = 64;  // each level at least doubles: 2^64 entries
struct Snapshot {
  size_t count = 0;
  const Level* levels[kMaxLevels] = {};  // newest first
};
struct Retired {
  uint64_t epoch;
  const Snapshot* snapshot;
  std::vector<Level*> levels;
  std::vector<Slot*> slots;
};

// Read by every lookup.
std::atomic<const Snapshot*> g_snapshot{nullptr};
std::atomic<uint64_t> g_epoch{0};
std::atomic<uint64_t> g_readers[2];
static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<const Snapshot*>::is_always_lock_free,
              "find_blob must not take a lock");

// The writers' state, under g_mutex.
std::mutex g_mutex;
std::vector<Level*> g_levels;  // what g_snapshot shows, newest first
std::unordered_map<const CodeBlob*, Slot*> g_slot_of;
std::map<uint64_t, const CodeBlob*> g_in_order;
uint64_t g_next_seq = 0;
size_t g_dead = 0;  // entries in g_levels whose slot is empty
std::deque<Retired> g_retired;
uint64_t g_freed = 0;

void free_retired(const Retired& r) {
  delete r.snapshot;
  for (Level* l : r.levels) delete l;
  for (Slot* s : r.slots) delete s;
  g_freed += r.snapshot != nullptr;
}

void reclaim() {
  for (int i = 0; i < 2; i++) {
    uint64_t e = g_epoch.load();
    if (g_readers[(e + 1) & 1].load() != 0) break;
    g_epoch.store(e + 1);
  }
  uint64_t e = g_epoch.load();
  while (!g_retired.empty() && g_retired.front().epoch + 2 <= e) {
    free_retired(g_retired.front());
    g_retired.pop_front();
  }
}

// Publishes g_levels; `dropped` and `dead` are no longer reachable from them.
void publish(std::vector<Level*> dropped, std::vector<Slot*> dead) {
  if (g_levels.size() > kMaxLevels) {
    std::fprintf(stderr, "minivm: code registry: %zu levels\n", g_levels.size());
    std::abort();
  }
  auto* snap = new Snapshot;
  snap->count = g_levels.size();
  std::copy(g_levels.begin(), g_levels.end(), snap->levels);
  const Snapshot* old = g_snapshot.exchange(snap);
  g_retired.push_back({g_epoch.load(), old, std::move(dropped), std::move(dead)});
  reclaim();
}

bool alive(const Entry& e) { return e.slot->blob.load(std::memory_order_relaxed) != nullptr; }

// Merges sorted levels a and b into a new level without dead entries (their slots go to
// `dead`).
Level* merge(const Level& a, const Level& b, std::vector<Slot*>& dead) {
  auto* m = new Level;
  m->entries.reserve(a.entries.size() + b.entries.size());
  auto keep = [&](const Entry& e) {
    if (alive(e)) {
      MVM_ASSERT(m->entries.empty() || m->entries.back().end <= e.begin,
                 "the live entries a merge keeps do not overlap: live blobs never do");
      m->entries.push_back(e);
    } else {
      dead.push_back(e.slot);
      g_dead--;
    }
  };
  size_t i = 0, j = 0;
  while (i < a.entries.size() || j < b.entries.size()) {
    if (j == b.entries.size() || (i < a.entries.size() && a.entries[i].begin < b.entries[j].begin))
      keep(a.entries[i++]);
    else
      keep(b.entries[j++]);
  }
  return m;
}

// Merges the newest level into the next while it is more than half that one's size.
void settle(std::vector<Level*>& dropped, std::vector<Slot*>& dead) {
  while (g_levels.size() >= 2 && 2 * g_levels[0]->entries.size() > g_levels[1]->entries.size()) {
    Level* m = merge(*g_levels[0], *g_levels[1], dead);
    dropped.push_back(g_levels[0]);
    dropped.push_back(g_levels[1]);
    g_levels.erase(g_levels.begin());
    if (m->entries.empty()) {
      delete m;
      g_levels.erase(g_levels.begin());
    } else {
      g_levels[0] = m;
    }
  }
}

// Rebuilds every level into one without dead entries.
void compact() {
  std::vector<Level*> dropped = g_levels;
  std::vector<Slot*> dead;
  auto* all = new Level;
  for (Level* l : g_levels)
    for (const Entry& e : l->entries) {
      if (alive(e))
        all->entries.push_back(e);
      else
        dead.push_back(e.slot);
    }
  std::sort(all->entries.begin(), all->entries.end(), [](const Entry& x, const Entry& y) { return x.begin < y.begin; });
  MVM_ASSERT(std::adjacent_find(all->entries.begin(), all->entries.end(),
                                [](const Entry& x, const Entry& y) { return x.end > y.begin; }) == all->entries.end(),
             "the live entries a compaction keeps do not overlap: live blobs never do");
  g_dead = 0;
  g_levels.clear();
  if (all->entries.empty())
    delete all;
  else
    g_levels.push_back(all);
  publish(std::move(dropped), std::move(dead));
}

// Under g_mutex. Returns whether blob was registered.
bool unregister_locked(const CodeBlob* blob) {
  auto it = g_slot_of.find(blob);
  if (it == g_slot_of.end()) return false;
  Slot* slot = it->second;
  slot->blob.store(nullptr);
  g_in_order.erase(slot->seq);
  g_slot_of.erase(it);
  g_dead++;
  if (g_dead > g_slot_of.size() && g_dead >= 16)
    compact();
  else
    reclaim();
  return true;
}

// Whether a live blob in g_levels shares an address with [begin, end). Under g_mutex. A
// level's entries are sorted and disjoint, so their ends ascend too: the ones that can
// reach begin are the last few that begin below end.
bool overlaps_live_blob(uintptr_t begin, uintptr_t end) {
  for (const Level* l : g_levels) {
    auto it = std::lower_bound(l->entries.begin(), l->entries.end(), end,
                               [](const Entry& e, uintptr_t v) { return e.begin < v; });
    while (it != l->entries.begin() && (--it)->end > begin)
      if (alive(*it)) return true;
  }
  return false;
}

const CodeBlob* search(const Snapshot& snap, uintptr_t pc) {
  for (size_t l = 0; l < snap.count; l++) {
    const Entry* entries = snap.levels[l]->entries.data();
    // The last entry that begins at or below pc is the level's only candidate.
    size_t lo = 0, hi = snap.levels[l]->entries.size();
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (entries[mid].begin <= pc)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo == 0 || entries[lo - 1].end <= pc) continue;
    if (const CodeBlob* b = entries[lo - 1].slot->blob.load(std::memory_order_acquire)) return b;
  }
  return nullptr;
}

}  // namespace

void register_blob(const CodeBlob* blob) {
  std::lock_guard<std::mutex> lock(g_mutex);
  // The same object registered again is a new blob in the memory of a dead one.
  unregister_locked(blob);
  MVM_ASSERT(blob->begin < blob->end && !overlaps_live_blob(blob->begin, blob->end),
             "a registered blob is a non-empty range that no live blob shares");
  auto* slot = new Slot{{blob}, g_next_seq++};
  g_slot_of[blob] = slot;
  g_in_order[slot->seq] = blob;
  g_levels.insert(g_levels.begin(), new Level{{Entry{blob->begin, blob->end, slot}}});
  std::vector<Level*> dropped;
  std::vector<Slot*> dead;
  settle(dropped, dead);
  publish(std::move(dropped), std::move(dead));
}

void unregister_blob(const CodeBlob* blob) {
  std::lock_guard<std::mutex> lock(g_mutex);
  unregister_locked(blob);
}

const CodeBlob* find_blob(uintptr_t pc) {
  std::atomic<uint64_t>& readers = g_readers[g_epoch.load() & 1];
  readers.fetch_add(1);
  const Snapshot* snap = g_snapshot.load();
  const CodeBlob* found = snap != nullptr ? search(*snap, pc) : nullptr;
  readers.fetch_sub(1);
  return found;
}

std::vector<const CodeBlob*> all_blobs() {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::vector<const CodeBlob*> out;
  out.reserve(g_in_order.size());
  for (auto& [seq, blob] : g_in_order) out.push_back(blob);
  return out;
}

RegistryStats registry_stats() {
  std::lock_guard<std::mutex> lock(g_mutex);
  RegistryStats s;
  s.live = g_slot_of.size();
  s.dead_entries = g_dead;
  s.levels = g_levels.size();
  s.retired = g_retired.size();
  s.freed = g_freed;
  return s;
}

}  // namespace runtime
