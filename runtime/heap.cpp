#include "runtime/heap.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "runtime/errors.h"
#include "runtime/gc.h"
#include "runtime/invariant.h"
#include "runtime/safepoint.h"
#include "runtime/thread.h"
#include "runtime/vm.h"

namespace runtime {

namespace {

// A collection runs once kYoungBudget bytes were handed out since the last one: a young
// one, which traces only what was allocated since and sweeps only where it was put, or a
// full one when the old generation has doubled since the last full collection (Lua's
// pause of 200%, over the old generation). The young budget is fixed: a young collection
// costs what survives it, not what the heap holds, so a large live graph (binary trees'
// long-lived tree) no longer makes collections rarer to stay affordable.
constexpr size_t kYoungBudget = size_t(8) << 20;
// Free runs smaller than this stay free chunks in the heap, not in the free list: they
// rejoin the list when a later sweep merges them with dead neighbours.
constexpr size_t kMinFreeRange = 512;

std::mutex g_mutex;  // everything below
char* g_base = nullptr;
size_t g_max = 0;
char* g_hwm = nullptr;              // every byte below is an array or a free chunk
char* g_zero_from = nullptr;        // every byte from here up is untouched or released: zero
std::vector<FreeRange> g_free;      // address-ordered; emptied ranges are skipped
size_t g_cursor = 0;                // ranges before it are exhausted or too small for a TLAB
size_t g_live_after_gc = 0;
size_t g_allocated_since_gc = 0;
size_t g_trigger = kYoungBudget;
size_t g_old_limit = kYoungBudget;   // the old generation's size that makes the next collection full
std::vector<FreeRange> g_young;     // carved since the last collection, address-ordered
uint8_t* g_cards = nullptr;         // one byte per card of the heap, from its base
uint8_t* g_cards_biased = nullptr;  // g_cards - (g_base >> kCardShift)


size_t page_round_up(uintptr_t p) {
  size_t page = size_t(sysconf(_SC_PAGESIZE));
  return (p + page - 1) & ~(page - 1);
}

// Takes between `min` and `max` bytes from the lowest free range holding at least
// `min`, starting at `from`; `dirty` is how many of its first bytes may hold old data.
// Under g_mutex. Returns nullptr when no range fits.
char* carve(size_t min, size_t max, size_t from, size_t* got, size_t* dirty) {
  for (size_t i = from; i < g_free.size(); i++) {
    FreeRange& r = g_free[i];
    size_t size = size_t(r.end - r.begin);
    if (size < min) continue;
    size_t take = std::min(size, max);
    char* p = r.begin;
    r.begin += take;
    if (from == g_cursor) g_cursor = i;
    g_hwm = std::max(g_hwm, p + take);
    // Only memory below g_zero_from can hold old arrays; the kernel zeroes the rest.
    *dirty = p < g_zero_from ? std::min(take, size_t(g_zero_from - p)) : 0;
    g_zero_from = std::max(g_zero_from, p + take);
    g_allocated_since_gc += take;
    // Carved in address order from a cursor, so a refill mostly extends the last region.
    if (!g_young.empty() && g_young.back().end == p)
      g_young.back().end = p + take;
    else
      g_young.push_back(FreeRange{p, p + take});
    *got = take;
    return p;
  }
  return nullptr;
}

// Room carved for one allocation: a new TLAB for a small array, else the array itself.
struct Carved {
  char* p = nullptr;
  size_t got = 0;             // bytes carved
  size_t dirty = 0;           // how many of the first bytes may hold old arrays
  bool over_budget = false;   // refused because the allocation budget is spent
};

// Carves room for an array of `bytes` from the free ranges: within the allocation budget,
// or, right after a collection, up to the heap's size. Retires t's TLAB first for a small
// array, whose refill it is.
Carved carve_for(Thread* t, size_t bytes, bool small, bool beyond_budget) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Carved c;
  size_t used = g_live_after_gc + g_allocated_since_gc;
  size_t want = small ? std::max(bytes, kTlabBytes) : bytes;
  if (!beyond_budget && used + want > g_trigger) {
    c.over_budget = true;
    return c;
  }
  if (small) {
    retire_tlab(t);
    c.p = carve(bytes, kTlabBytes, g_cursor, &c.got, &c.dirty);
    if (c.p == nullptr) c.p = carve(bytes, kTlabBytes, 0, &c.got, &c.dirty);
  } else {
    c.p = carve(bytes, bytes, 0, &c.got, &c.dirty);
  }
  return c;
}

// The array at the start of `c`, zeroed, and the rest of a small array's room as t's TLAB.
Array* hand_out(Thread* t, const Carved& c, ArrayKind kind, int64_t length, size_t bytes, bool small) {
  // Reused memory holds dead arrays: zero it as it is handed out (HotSpot zeroes TLABs
  // the same way), outside the lock; fresh memory is zero already.
  std::memset(c.p, 0, c.dirty);
  if (small) {
    t->core.tlab_top = reinterpret_cast<uintptr_t>(c.p + bytes);
    t->core.tlab_end = reinterpret_cast<uintptr_t>(c.p + c.got);
  }
  auto* a = reinterpret_cast<Array*>(c.p);
  a->kind = kind;
  a->length = length;
  return a;
}

std::string mib(size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", double(bytes) / double(1 << 20));
  return text;
}

// An array larger than the heap, or one that a collection made for it still left no room
// for: the live arrays leave less than `bytes`, or (nothing moves) no gap between them is
// that large.
[[noreturn]] void heap_exhausted(Thread* t, ArrayKind kind, int64_t length, size_t bytes) {
  size_t live, largest = 0;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    live = g_live_after_gc;
    for (const FreeRange& r : g_free) largest = std::max(largest, size_t(r.end - r.begin));
  }
  std::string why = bytes > g_max          ? "larger than the whole heap"
                    : bytes > g_max - live ? mib(live) + " live after collection"
                                           : "the largest free range between the " + mib(live) +
                                                 " of live arrays is " + mib(largest) +
                                                 " (the collector does not move arrays)";
  std::string what = kind == ArrayKind::String ? "string of " + std::to_string(length) + " bytes"
                                               : "array of " + std::to_string(length) + " elements";
  throw_runtime_error(t, "heap exhausted: new " + what + " (" + mib(bytes) +
                             ") does not fit: " + why + ", --heap=" + std::to_string(g_max >> 20) + "m");
}

// Whether no thread has a TLAB (its unused tail is no chunk until it is retired).
bool every_tlab_retired() {
  for (Thread* t : VM::get().threads())
    if (t->core.tlab_top != 0 || t->core.tlab_end != 0) return false;
  return true;
}

// The heap's address range, aligned to a huge page and advised for transparent huge
// pages (HotSpot's UseTransparentHugePages): the first touch of each 2 MiB commits it
// whole, one fault where 4 KiB pages take 512. An allocating program touches at least
// a young budget of fresh memory, and a fault is dear where a hypervisor maps the
// pages. Where the kernel has THP off, the advice changes nothing.
void* reserve_heap(size_t bytes) {
  constexpr size_t kHuge = size_t(2) << 20;
  size_t span = bytes + kHuge;
  void* mem = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem == MAP_FAILED) return nullptr;
  uintptr_t start = reinterpret_cast<uintptr_t>(mem);
  uintptr_t base = (start + kHuge - 1) & ~(kHuge - 1);
  if (base > start) munmap(mem, base - start);
  if (start + span > base + bytes) munmap(reinterpret_cast<void*>(base + bytes), start + span - (base + bytes));
  madvise(reinterpret_cast<void*>(base), bytes, MADV_HUGEPAGE);
  return reinterpret_cast<void*>(base);
}

}  // namespace

void init_heap(size_t max_bytes) {
  max_bytes &= ~(kObjectAlignment - 1);
  void* mem = reserve_heap(max_bytes);
  if (mem == nullptr) {
    std::fprintf(stderr, "minivm: cannot reserve a heap of %zu bytes\n", max_bytes);
    std::exit(2);
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  g_base = static_cast<char*>(mem);
  g_max = max_bytes;
  g_hwm = g_base;
  g_zero_from = g_base;
  g_free = {FreeRange{g_base, g_base + g_max}};
  g_trigger = std::min(kYoungBudget, g_max);
  // The card table, reserved like the heap: its pages are committed as cards are dirtied.
  size_t cards = (max_bytes >> kCardShift) + 1;
  void* table = mmap(nullptr, cards, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (table == MAP_FAILED) {
    std::fprintf(stderr, "minivm: cannot reserve a card table of %zu bytes\n", cards);
    std::exit(2);
  }
  g_cards = static_cast<uint8_t*>(table);
  g_cards_biased = g_cards - (reinterpret_cast<uintptr_t>(g_base) >> kCardShift);
}

uint8_t* card_table_biased() { return g_cards_biased; }

size_t heap_max_bytes() { return g_max; }

size_t heap_used_bytes() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_live_after_gc + g_allocated_since_gc;
}

size_t heap_allocation_budget() {
  std::lock_guard<std::mutex> lock(g_mutex);
  size_t used = g_live_after_gc + g_allocated_since_gc;
  return used < g_trigger ? g_trigger - used : 0;
}

void write_free_chunk(char* begin, char* end) {
  auto* a = reinterpret_cast<Array*>(begin);
  a->kind = ArrayKind::Free;
  a->reserved = 0;
  a->length = int64_t((size_t(end - begin) - sizeof(Array)) / 8);
}

void retire_tlab(Thread* t) {
  auto* top = reinterpret_cast<char*>(t->core.tlab_top);
  auto* end = reinterpret_cast<char*>(t->core.tlab_end);
  if (top != nullptr && top < end) write_free_chunk(top, end);
  t->core.tlab_top = 0;
  t->core.tlab_end = 0;
}

Array* allocate_array(Thread* t, ArrayKind kind, int64_t length) {
  if (length < 0) throw_runtime_error(t, "negative array size " + std::to_string(length));
  if (uint64_t(length) > (g_max - sizeof(Array)) / 8)
    heap_exhausted(t, kind, length, uint64_t(length) < SIZE_MAX / 16 ? object_bytes(kind, length) : SIZE_MAX);
  size_t bytes = object_bytes(kind, length);
  bool small = bytes <= array_bytes(kMaxTlabLength);
  if (small && t->core.tlab_top != 0 && t->core.tlab_end - t->core.tlab_top >= bytes) {
    // The bump the generated fast path makes: a TLAB was zeroed when it was handed out, so
    // a runtime call that allocates (a string, a closure) does not throw it away and
    // carve and zero a new one each time.
    auto* a = reinterpret_cast<Array*>(t->core.tlab_top);
    t->core.tlab_top += bytes;
    a->kind = kind;
    a->length = length;
    return a;
  }
  uint64_t seen = gc_count();  // before the attempt: a collection after it may have made room
  Carved c = carve_for(t, bytes, small, /*beyond_budget=*/false);
  if (c.p == nullptr) {
    // The collection's safepoint makes the allocation too, while every other thread is
    // stopped: retried first if another thread's collection has ended since `seen`, else
    // (or if that fails) right after this one's sweep. Room made by a collection and handed
    // out afterwards would go to whichever thread ran first, and on a loaded machine the
    // thread that needed it, woken last, could lose that race every time: it would report a
    // full heap with nothing live.
    bool ok = collect_for_allocation(t, c.over_budget ? GcCause::allocation_budget : GcCause::heap_full, seen,
                                     [&](bool collected) {
                                       c = carve_for(t, bytes, small, /*beyond_budget=*/collected);
                                       return c.p != nullptr;
                                     });
    if (!ok) heap_exhausted(t, kind, length, bytes);
  }
  return hand_out(t, c, kind, length, bytes, small);
}

Array* allocate_object(Thread* t, uint32_t class_index, int64_t fields) {
  Array* o = allocate_array(t, ArrayKind::Object, fields);
  o->reserved = class_index;
  return o;
}

HeapWalk heap_prepare_walk() {
  MVM_ASSERT(safepoint_pending() && every_tlab_retired(), "the heap is walked at a safepoint, with every TLAB retired");
  std::lock_guard<std::mutex> lock(g_mutex);
  for (FreeRange& r : g_free) {
    char* end = std::min(r.end, g_hwm);
    if (r.begin < end) write_free_chunk(r.begin, end);
  }
  return HeapWalk{g_base, g_hwm};
}

namespace {

// Every card clean and nothing young: what survived a collection is old. Under g_mutex.
void end_young_generation() {
  std::memset(g_cards, 0, (size_t(g_hwm - g_base) >> kCardShift) + 1);
  g_young.clear();
}

// Drops the ranges too small to be worth a search (each is a free chunk in the heap
// already, or is made one here) and resets the allocation state. Under g_mutex.
void install_free_ranges(std::vector<FreeRange> free, size_t live_bytes) {
  for (const FreeRange& r : free)
    if (size_t(r.end - r.begin) < kMinFreeRange) write_free_chunk(r.begin, r.end);
  free.erase(std::remove_if(free.begin(), free.end(),
                            [](const FreeRange& r) { return size_t(r.end - r.begin) < kMinFreeRange; }),
             free.end());
  g_free = std::move(free);
  g_cursor = 0;
  g_live_after_gc = live_bytes;
  g_allocated_since_gc = 0;
  g_trigger = std::min(live_bytes + kYoungBudget, g_max);
}

}  // namespace

void heap_after_sweep(std::vector<FreeRange> free, size_t live_bytes) {
  std::lock_guard<std::mutex> lock(g_mutex);
  end_young_generation();
  g_old_limit = std::max(2 * live_bytes, live_bytes + kYoungBudget);
  char* old_hwm = g_hwm;
  char* heap_end = g_base + g_max;
  if (!free.empty() && free.back().end == old_hwm) {
    g_hwm = free.back().begin;
    free.back().end = heap_end;
  } else {
    free.push_back(FreeRange{old_hwm, heap_end});
  }
  // Memory stays committed for the next cycles (reusing it costs a memset; fresh pages
  // cost a fault each), unless the cycle that ended reached beyond what the heap may hold
  // before the next full collection (the old generation's limit and a young budget): then
  // what lies above both that and the live arrays goes back to the kernel.
  size_t bound = g_old_limit + kYoungBudget;
  if (size_t(old_hwm - g_base) > bound) {
    char* keep = std::max(g_hwm, g_base + std::min(bound, g_max));
    uintptr_t release = page_round_up(reinterpret_cast<uintptr_t>(keep) + sizeof(Array));
    uintptr_t release_end = page_round_up(reinterpret_cast<uintptr_t>(g_zero_from));
    if (release < release_end) {
      madvise(reinterpret_cast<void*>(release), release_end - release, MADV_DONTNEED);
      g_zero_from = reinterpret_cast<char*>(release);
    }
  }
  install_free_ranges(std::move(free), live_bytes);
}

const std::vector<FreeRange>& heap_young_regions() {
  MVM_ASSERT(safepoint_pending(), "the young regions are read at a safepoint");
  return g_young;
}

std::vector<char*> heap_dirty_cards() {
  MVM_ASSERT(safepoint_pending(), "the card table is read at a safepoint");
  std::vector<char*> dirty;
  size_t n = (size_t(g_hwm - g_base) >> kCardShift) + 1;
  size_t k = 0;
  for (; k + 8 <= n; k += 8) {  // most cards are clean: eight at a time
    uint64_t word;
    std::memcpy(&word, g_cards + k, 8);
    if (word == 0) continue;
    for (size_t j = k; j < k + 8; j++)
      if (g_cards[j] != 0) dirty.push_back(g_base + (j << kCardShift));
  }
  for (; k < n; k++)
    if (g_cards[k] != 0) dirty.push_back(g_base + (k << kCardShift));
  return dirty;
}

void heap_after_young_sweep(std::vector<FreeRange> free, size_t survivor_bytes) {
  std::lock_guard<std::mutex> lock(g_mutex);
  end_young_generation();
  // The free ranges left from before (what was not carved of them) and the young dead
  // space, merged where they touch.
  for (const FreeRange& r : g_free)
    if (r.begin < r.end) free.push_back(r);
  std::sort(free.begin(), free.end(), [](const FreeRange& x, const FreeRange& y) { return x.begin < y.begin; });
  std::vector<FreeRange> merged;
  for (const FreeRange& r : free) {
    if (!merged.empty() && merged.back().end == r.begin)
      merged.back().end = r.end;
    else
      merged.push_back(r);
  }
  // The last range reaches the heap's end (carving never takes all of it but from a full
  // heap): the high-water mark comes down to its start.
  if (!merged.empty() && merged.back().end == g_base + g_max) g_hwm = std::min(g_hwm, merged.back().begin);
  install_free_ranges(std::move(merged), g_live_after_gc + survivor_bytes);
}

bool heap_old_generation_full() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_live_after_gc > g_old_limit;
}
}  // namespace runtime
