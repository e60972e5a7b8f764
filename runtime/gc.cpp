#include "runtime/gc.h"

#include <time.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <vector>

#include "runtime/classes.h"
#include "runtime/clock.h"
#include "runtime/heap.h"
#include "runtime/invariant.h"
#include "runtime/safepoint.h"
#include "runtime/stack_walker.h"
#include "runtime/strings.h"
#include "runtime/thread.h"
#include "runtime/vm.h"

namespace runtime {

namespace {

std::atomic<uint64_t> g_count{0};
std::atomic<bool> g_log{false};
std::atomic<bool> g_verify{false};
std::atomic<bool> g_a_lot{false};
std::atomic<bool> g_young_on{true};
std::mutex g_last_mutex;
GcEvent g_last;
std::atomic<GcObserver> g_observer{nullptr};

[[noreturn]] void heap_corrupt(const char* what, const void* at, const RootSource* where = nullptr) {
  std::fprintf(stderr, "minivm: internal error: heap walk: %s at %p%s%s\n", what, at, where ? ", read from " : "",
               where ? describe(*where).c_str() : "");
  std::abort();
}

// The mark bits: one per 16-byte granule where a live value begins, kept from one
// collection to the next ("sticky", Demers et al., "Combining generational and
// conservative garbage collection", POPL 1990). A full collection clears them and marks
// everything reachable; a young one keeps them, so every value that survived a
// collection is marked (old) and every value allocated since is not (young), and marking
// stops at old values. Nothing moves, so a conservatively scanned word can still name
// a young value.
std::vector<uint64_t> g_marks;
uint64_t g_objects_old = 0;  // values marked in the bitmap (some dead since the last full collection)

// One collection, with every Mini thread stopped. Full: the bitmap cleared, everything
// reachable from the roots marked, the heap swept from the marks. Young: the old values
// that the write barrier recorded (the dirty cards) are scanned as roots beside the real
// ones, marking stops at old values, and only the young regions are swept. Either way
// the sweep visits the marks, never the dead values: a pause grows with what survives.
// Exact roots name value starts by construction; a conservatively scanned word is
// checked against the heap's value starts, found by a walk made only when one is needed
// (or for every root with --gc-verify).
class MarkSweep {
 public:
  explicit MarkSweep(bool young) : young_(young) {}

  void run(GcEvent& e) {
    MVM_ASSERT(safepoint_pending(), "the collector runs inside a global safepoint: no Mini thread runs meanwhile");
    for (Thread* t : VM::get().threads()) retire_tlab(t);
    walk_ = heap_prepare_walk();
    size_t words = granule(walk_.end) / 64 + 1;
    if (young_) {
      if (g_marks.size() < words) g_marks.resize(words, 0);  // values above the old end are young
    } else {
      g_marks.assign(words, 0);
      g_objects_old = 0;
    }
    marks_ = &g_marks;
    bool verify = g_verify.load(std::memory_order_relaxed);
    if (verify) find_array_starts();
    if (young_) scan_dirty_cards(e);
    mark_from_roots(e.roots);
    if (young_ && verify) verify_young();
    if (young_)
      sweep_young(e);
    else
      sweep(e);
  }

 private:
  size_t granule(const char* p) const { return size_t(p - walk_.begin) / kObjectAlignment; }
  static bool test(const std::vector<uint64_t>& bits, size_t g) { return (bits[g / 64] >> (g % 64) & 1) != 0; }
  static void set(std::vector<uint64_t>& bits, size_t g) { bits[g / 64] |= uint64_t(1) << (g % 64); }

  static size_t chunk_bytes(const char* p, const char* end) {
    const auto* a = reinterpret_cast<const Array*>(p);
    if (a->length < 0 || uint32_t(a->kind) >= kArrayKindCount) heap_corrupt("not an array, string or free chunk", p);
    size_t bytes = object_bytes(a->kind, a->length);
    if (bytes > size_t(end - p)) heap_corrupt("an object beyond the heap's end", p);
    return bytes;
  }

  void find_array_starts() {
    starts_.assign(granule(walk_.end) / 64 + 1, 0);
    for (char* p = walk_.begin; p < walk_.end; p += chunk_bytes(p, walk_.end)) {
      if (reinterpret_cast<Array*>(p)->kind == ArrayKind::Free) continue;
      set(starts_, granule(p));
    }
  }

  void mark(int64_t v, bool exact, const RootSource& where) {
    auto* p = reinterpret_cast<char*>(v);
    if (p == nullptr) return;
    bool in_heap = p >= walk_.begin && p < walk_.end && (uintptr_t(p) & (kObjectAlignment - 1)) == 0;
    if (!exact || g_verify.load(std::memory_order_relaxed)) {
      if (starts_.empty()) find_array_starts();
      if (!in_heap || !test(starts_, granule(p))) {
        if (exact && !is_permanent(p)) heap_corrupt("an exact reference that is not a heap value's start", p, &where);
        return;
      }
    } else if (!in_heap) {
      if (is_permanent(p)) return;  // a string literal: never collected
      heap_corrupt("an exact root outside the heap", p, &where);
    }
    size_t g = granule(p);
    if (test(*marks_, g)) return;  // marked in this collection, or old in a young one
    set(*marks_, g);
    // Its header is not read here: that read misses the cache for most objects of a
    // large graph, and trace reads it later, after a prefetch has had time to land.
    gray_.push_back(reinterpret_cast<const Array*>(p));
  }

  // Marks, into *marks_, everything the roots reach that is not marked already.
  void mark_from_roots(RootStats& stats) {
    visit_roots([this](int64_t v, bool exact, const RootSource& where) { mark(v, exact, where); }, stats);
    trace();
  }

  // The old values that may reference young ones: every marked value whose header lies
  // in a card the write barrier dirtied since the last collection. Scanned before the
  // roots are marked, while the only marked values are old.
  void scan_dirty_cards(GcEvent& e) {
    for (char* card : heap_dirty_cards()) {
      e.dirty_cards++;
      // A card is 32 granules, half a word of the bitmap (the heap's base is page-aligned).
      static_assert(kCardBytes / kObjectAlignment == 32);
      size_t first = granule(card);
      uint64_t bits = ((*marks_)[first / 64] >> (first % 64)) & 0xFFFFFFFFu;
      for (; bits != 0; bits &= bits - 1)
        scan(reinterpret_cast<const Array*>(card + size_t(__builtin_ctzll(bits)) * kObjectAlignment));
    }
  }

  // Marks what the marked objects reference, through their classes' reference fields
  // and every element of a reference array, until nothing new is reached (a stack of
  // objects marked but not yet scanned). Each object taken from the stack is prefetched
  // and scanned kPrefetchAhead objects later, so that its header and fields are in the
  // cache by then (Cher, Hosking and Vijaykumar, "Software prefetching for mark-sweep
  // garbage collection", ASPLOS 2004): on a graph larger than the cache, most of the
  // mark's time is these misses.
  void trace() {
    constexpr size_t kPrefetchAhead = 32;
    const Array* ahead[kPrefetchAhead];
    size_t first = 0, count = 0;
    for (;;) {
      while (count < kPrefetchAhead && !gray_.empty()) {
        const Array* o = gray_.back();
        gray_.pop_back();
        __builtin_prefetch(o);
        ahead[(first + count++) % kPrefetchAhead] = o;
      }
      if (count == 0) return;
      const Array* o = ahead[first];
      first = (first + 1) % kPrefetchAhead;
      count--;
      scan(o);
    }
  }

  // Marks what one marked value references: a reference array's elements, a closure's
  // captures (its data[0] is its Method*), an object's reference fields.
  void scan(const Array* o) {
    if (o->kind == ArrayKind::Ref || o->kind == ArrayKind::Closure) {
      for (int64_t k = o->kind == ArrayKind::Closure ? 1 : 0; k < o->length; k++) {
        RootSource where{RootKind::array_element, -1, nullptr, -1, 0, int32_t(k)};
        where.object = o;
        mark(o->data[k], true, where);
      }
      return;
    }
    if (o->kind != ArrayKind::Object) return;  // ints, floats, bytes: nothing to trace
    if (o->reserved >= class_count() || o->length != g_class_shapes[o->reserved].fields)
      heap_corrupt("an object whose header names no class of the program", o);
    const ClassShape& c = g_class_shapes[o->reserved];
    for (uint32_t k = 0; k < c.ref_count; k++) {
      RootSource where{RootKind::object_field, -1, nullptr, int32_t(c.index), 0, int32_t(c.refs[k])};
      where.object = o;
      mark(o->data[c.refs[k]], true, where);
    }
  }

  // --gc-verify after a young mark: a full mark into a bitmap of its own, every value it
  // reaches marked by the young one too. One that is not is young, reachable only through
  // an old value whose card was clean: a reference store without its write barrier.
  void verify_young() {
    std::vector<uint64_t> full(marks_->size(), 0);
    std::vector<uint64_t>* sticky = marks_;
    marks_ = &full;
    RootStats ignored;
    mark_from_roots(ignored);
    marks_ = sticky;
    for (size_t w = 0; w < full.size(); w++)
      if (uint64_t missed = full[w] & ~(*sticky)[w])
        heap_corrupt("a value reachable from the roots that the young collection did not mark (a reference "
                     "store into an old value without its write barrier)",
                     walk_.begin + (w * 64 + size_t(__builtin_ctzll(missed))) * kObjectAlignment);
  }

  // Between marked values in [begin, end): the gaps become free chunks (each headed so
  // the heap stays walkable) and free ranges; adds the marked values' bytes and count to
  // `live` and `count`.
  void sweep_range(char* begin, char* end, std::vector<FreeRange>& free, size_t& live, uint64_t& count) {
    char* gap = begin;
    auto close_gap = [&](char* to) {
      if (gap >= to) return;
      write_free_chunk(gap, to);
      auto* f = reinterpret_cast<Array*>(gap);
      // Verifying, the dead arrays' contents become garbage at once, so a stale array
      // that is still read shows it (TLAB refills zero memory again).
      if (g_verify.load(std::memory_order_relaxed)) std::memset(f->data, 0xA5, size_t(to - gap) - sizeof(Array));
      free.push_back(FreeRange{gap, to});
    };
    size_t g_begin = granule(begin), g_end = granule(end);
    for (size_t w = g_begin / 64; w <= (g_end - 1) / 64 && g_end > g_begin; w++) {
      uint64_t bits = (*marks_)[w];
      if (w == g_begin / 64) bits &= ~uint64_t(0) << (g_begin % 64);
      if (w == (g_end - 1) / 64 && g_end % 64 != 0) bits &= ~(~uint64_t(0) << (g_end % 64));
      for (; bits != 0; bits &= bits - 1) {
        char* p = walk_.begin + (w * 64 + size_t(__builtin_ctzll(bits))) * kObjectAlignment;
        size_t bytes = chunk_bytes(p, end);
        close_gap(p);
        live += bytes;
        count++;
        gap = p + bytes;
      }
    }
    close_gap(end);
  }

  void sweep(GcEvent& e) {
    std::vector<FreeRange> free;
    size_t live = 0;
    sweep_range(walk_.begin, walk_.end, free, live, e.objects_live);
    g_objects_old = e.objects_live;
    heap_after_sweep(std::move(free), live);
  }

  // Only where the values allocated since the last collection lie: the old ones stay,
  // dead or not, until a full collection.
  void sweep_young(GcEvent& e) {
    std::vector<FreeRange> free;
    size_t survived = 0;
    uint64_t count = 0;
    for (const FreeRange& r : heap_young_regions()) sweep_range(r.begin, std::min(r.end, walk_.end), free, survived, count);
    e.young_survivors = count;
    g_objects_old += count;
    e.objects_live = g_objects_old;
    heap_after_young_sweep(std::move(free), survived);
  }

  bool young_;
  HeapWalk walk_{};
  std::vector<uint64_t>* marks_ = nullptr;  // g_marks, or verify_young's own
  std::vector<const Array*> gray_;          // marked values whose references are still to be traced
  std::vector<uint64_t> starts_;            // one bit per granule where any value begins, when a walk was needed
};

// "function (file:line)" of t's top Mini frame, while t is stopped.
std::string where(Thread* t) {
  StackWalker w(t);
  Frame f;
  if (!w.next(f)) return "?";
  const vm::Function& fn = *f.method->function;
  return fn.name + " (" + VM::get().module().file_of(fn) + ":" + std::to_string(f.line) + ")";
}

}  // namespace

const char* gc_cause_name(GcCause c) {
  switch (c) {
    case GcCause::allocation_budget: return "allocation budget";
    case GcCause::heap_full: return "heap full";
    case GcCause::a_lot: return "gc-a-lot";
  }
  MVM_ASSERT(false, "a GcCause is one of its enumerators");
  return "?";
}

uint64_t gc_count() { return g_count.load(std::memory_order_acquire); }

void set_gc_log(bool on) { g_log.store(on); }

void set_gc_observer(GcObserver observer) { g_observer.store(observer, std::memory_order_release); }

void set_gc_verify(bool on) { g_verify.store(on); }

void set_gc_a_lot(bool on) { g_a_lot.store(on); }
bool gc_a_lot() { return g_a_lot.load(std::memory_order_relaxed); }

void set_gc_young(bool on) { g_young_on.store(on); }

GcEvent last_gc_event() {
  std::lock_guard<std::mutex> lock(g_last_mutex);
  return g_last;
}

std::string format_gc_event(const GcEvent& e) {
  auto mib = [](size_t b) { return double(b) / double(1 << 20); };
  auto ms = [](uint64_t ns) { return double(ns) / 1e6; };
  char line[640];
  char on_cpu[64];
  std::snprintf(on_cpu, sizeof on_cpu, ", %.3f ms of it on a CPU", ms(e.slowest_cpu_ns));
  std::string slowest = e.slowest_thread < 0 ? std::string("no thread to wait for")
                                             : "last to stop: thread " + std::to_string(e.slowest_thread) + " at " +
                                                   e.slowest_where + on_cpu;
  char young[96] = "";
  if (e.young)
    std::snprintf(young, sizeof young, ", %llu young survived, %llu dirty cards",
                  (unsigned long long)e.young_survivors, (unsigned long long)e.dirty_cards);
  std::snprintf(line, sizeof line,
                "[gc %llu] %s, %s: pause %.3f ms (time to safepoint %.3f ms, %d thread%s stopped, %s), "
                "heap %.1f MiB -> %.1f MiB of %.0f MiB, %llu objects live%s",
                (unsigned long long)e.id, e.young ? "young" : "full", gc_cause_name(e.cause), ms(e.pause_ns),
                ms(e.time_to_safepoint_ns), e.threads_stopped, e.threads_stopped == 1 ? "" : "s", slowest.c_str(),
                mib(e.heap_before), mib(e.heap_after), mib(e.heap_max), (unsigned long long)e.objects_live, young);
  return line;
}

namespace {

// One collection's bookkeeping and its --gc-log line, around the mark-sweep.
class Collection {
 public:
  Collection(Thread* requester, GcCause cause) : start_(monotonic_ns()) {
    e_.cause = cause;
    e_.requester = requester != nullptr ? requester->id : -1;
  }

  // At the safepoint. `full`: a full collection whatever the policy says.
  void run(bool full) {
    ran_ = true;
    e_.heap_before = heap_used_bytes();
    const SafepointStats& sp = current_safepoint();
    if (sp.slowest_thread >= 0)
      for (Thread* t : VM::get().threads())
        if (t->id == sp.slowest_thread) e_.slowest_where = where(t);
    uint64_t id = g_count.load(std::memory_order_acquire) + 1;
    e_.young = !full && g_young_on.load(std::memory_order_relaxed) && e_.cause != GcCause::heap_full &&
               !heap_old_generation_full() && !(e_.cause == GcCause::a_lot && id % 2 == 0);
    MarkSweep(e_.young).run(e_);
    e_.heap_after = heap_used_bytes();
    e_.id = g_count.fetch_add(1, std::memory_order_acq_rel) + 1;
  }

  bool young() const { return e_.young; }
  uint64_t start() const { return start_; }
  void end_pause_at(uint64_t t) { end_ = t; }

  // After the safepoint: logs and keeps the event, if the collection ran.
  void finish(const SafepointStats& stats, bool shares_safepoint = false) {
    if (!ran_) return;
    e_.start_ns = start_;
    e_.pause_ns = (end_ != 0 ? end_ : monotonic_ns()) - start_;
    e_.safepoint_id = stats.id;
    e_.safepoint_start_ns = stats.start_ns;
    e_.safepoint_end_ns = stats.end_ns;
    e_.shares_safepoint = shares_safepoint;
    e_.time_to_safepoint_ns = stats.time_to_safepoint_ns;
    e_.threads_stopped = stats.threads;
    e_.slowest_thread = stats.slowest_thread;
    e_.slowest_cpu_ns = stats.slowest_cpu_ns;
    e_.heap_max = heap_max_bytes();
    if (g_log.load(std::memory_order_relaxed)) std::fprintf(stderr, "%s\n", format_gc_event(e_).c_str());
    if (GcObserver observer = g_observer.load(std::memory_order_acquire)) observer(e_);
    std::lock_guard<std::mutex> lock(g_last_mutex);
    g_last = e_;
  }

 private:
  GcEvent e_;
  uint64_t start_;
  uint64_t end_ = 0;
  bool ran_ = false;
};

}  // namespace

void collect(Thread* requester, GcCause cause, uint64_t seen) {
  Collection c(requester, cause);
  SafepointStats stats = run_at_safepoint([&] {
    // Another thread's collection may have ended while this one waited to request.
    if (g_count.load(std::memory_order_acquire) == seen) c.run(/*full=*/false);
  });
  c.finish(stats);
}

bool collect_for_allocation(Thread* requester, GcCause cause, uint64_t seen,
                            const std::function<bool(bool collected)>& allocate) {
  Collection c(requester, cause);
  std::optional<Collection> again;
  bool allocated = false;
  SafepointStats stats = run_at_safepoint([&] {
    if (g_count.load(std::memory_order_acquire) != seen && allocate(false)) {
      allocated = true;
      return;
    }
    c.run(/*full=*/false);
    allocated = allocate(true);
    // A young collection frees only young space; the room may lie among dead old values.
    if (!allocated && c.young()) {
      again.emplace(requester, GcCause::heap_full);
      c.end_pause_at(again->start());  // one safepoint, two pauses: each its own
      again->run(/*full=*/true);
      allocated = allocate(true);
    }
  });
  c.finish(stats);
  if (again) again->finish(stats, /*shares_safepoint=*/true);
  return allocated;
}

}  // namespace runtime
