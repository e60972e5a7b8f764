#include "runtime/gc.h"

#include <time.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "runtime/heap.h"
#include "runtime/safepoint.h"
#include "runtime/stack_walker.h"
#include "runtime/thread.h"
#include "runtime/vm.h"

namespace runtime {

namespace {

std::atomic<uint64_t> g_count{0};
std::atomic<bool> g_log{false};
std::mutex g_last_mutex;
GcEvent g_last;

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

[[noreturn]] void heap_corrupt(const char* what, const void* at) {
  std::fprintf(stderr, "minivm: internal error: heap walk: %s at %p\n", what, at);
  std::abort();
}

// One mark-sweep over the heap, with every Mini thread stopped.
class MarkSweep {
 public:
  void run(GcEvent& e) {
    for (Thread* t : VM::get().threads()) retire_tlab(t);
    walk_ = heap_prepare_walk();
    find_array_starts();
    visit_roots([this](int64_t v) { mark(v); }, e.roots);
    sweep(e);
  }

 private:
  size_t granule(const char* p) const { return size_t(p - walk_.begin) / kObjectAlignment; }

  static size_t chunk_bytes(const char* p, const char* end) {
    const auto* a = reinterpret_cast<const Array*>(p);
    size_t bytes = array_bytes(a->length);
    if (a->length < 0 || uint32_t(a->kind) > uint32_t(ArrayKind::Free) || bytes > size_t(end - p))
      heap_corrupt("not an array or free chunk", p);
    return bytes;
  }

  // Roots are checked against this, so a stale or conservative slot can never mark the
  // middle of an array or a free chunk.
  void find_array_starts() {
    starts_.assign(granule(walk_.end) / 64 + 1, 0);
    for (char* p = walk_.begin; p < walk_.end; p += chunk_bytes(p, walk_.end)) {
      if (reinterpret_cast<Array*>(p)->kind == ArrayKind::Free) continue;
      size_t g = granule(p);
      starts_[g / 64] |= uint64_t(1) << (g % 64);
    }
  }

  void mark(int64_t v) {
    auto* p = reinterpret_cast<char*>(v);
    if (p < walk_.begin || p >= walk_.end || (uintptr_t(p) & (kObjectAlignment - 1)) != 0) return;
    size_t g = granule(p);
    if ((starts_[g / 64] >> (g % 64) & 1) == 0) return;
    reinterpret_cast<Array*>(p)->gc_bits |= kMarkBit;
  }

  void sweep(GcEvent& e) {
    std::vector<FreeRange> free;
    size_t live = 0;
    char* run = nullptr;  // start of the current run of dead arrays and free chunks
    auto close_run = [&](char* end) {
      if (run == nullptr) return;
      auto* f = reinterpret_cast<Array*>(run);
      f->kind = ArrayKind::Free;
      f->gc_bits = 0;
      f->length = int64_t((size_t(end - run) - sizeof(Array)) / 8);
      free.push_back(FreeRange{run, end});
      run = nullptr;
    };
    for (char* p = walk_.begin; p < walk_.end;) {
      auto* a = reinterpret_cast<Array*>(p);
      size_t bytes = chunk_bytes(p, walk_.end);
      if (a->kind != ArrayKind::Free && (a->gc_bits & kMarkBit) != 0) {
        a->gc_bits = 0;
        live += bytes;
        e.arrays_live++;
        close_run(p);
      } else {
        if (a->kind != ArrayKind::Free) e.arrays_freed++;
        if (run == nullptr) run = p;
      }
      p += bytes;
    }
    close_run(walk_.end);
    heap_after_sweep(std::move(free), live);
  }

  HeapWalk walk_{};
  std::vector<uint64_t> starts_;  // one bit per 16-byte granule: an array begins there
};

// "function (file:line)" of t's top Mini frame, while t is stopped.
std::string where(Thread* t) {
  StackWalker w(t);
  Frame f;
  if (!w.next(f)) return "?";
  const vm::Function& fn = *f.method->function;
  return fn.name + " (" + VM::get().module().file + ":" + std::to_string(f.line) + ")";
}

}  // namespace

const char* gc_cause_name(GcCause c) {
  switch (c) {
    case GcCause::allocation_budget: return "allocation budget";
    case GcCause::heap_full: return "heap full";
  }
  return "?";
}

uint64_t gc_count() { return g_count.load(std::memory_order_acquire); }

void set_gc_log(bool on) { g_log.store(on); }

GcEvent last_gc_event() {
  std::lock_guard<std::mutex> lock(g_last_mutex);
  return g_last;
}

std::string format_gc_event(const GcEvent& e) {
  auto mib = [](size_t b) { return double(b) / double(1 << 20); };
  auto ms = [](uint64_t ns) { return double(ns) / 1e6; };
  char line[512];
  std::string slowest = e.slowest_thread < 0 ? std::string("no thread to wait for")
                                             : "last to stop: thread " + std::to_string(e.slowest_thread) + " at " +
                                                   e.slowest_where;
  std::snprintf(line, sizeof line,
                "[gc %llu] %s: pause %.3f ms (time to safepoint %.3f ms, %d thread%s stopped, %s), "
                "heap %.1f MiB -> %.1f MiB of %.0f MiB, %llu arrays freed, %llu live",
                (unsigned long long)e.id, gc_cause_name(e.cause), ms(e.pause_ns), ms(e.time_to_safepoint_ns),
                e.threads_stopped, e.threads_stopped == 1 ? "" : "s", slowest.c_str(), mib(e.heap_before),
                mib(e.heap_after), mib(e.heap_max), (unsigned long long)e.arrays_freed,
                (unsigned long long)e.arrays_live);
  return line;
}

void collect(Thread* requester, GcCause cause, uint64_t seen) {
  GcEvent e;
  e.cause = cause;
  e.requester = requester != nullptr ? requester->id : -1;
  uint64_t start = now_ns();
  bool ran = false;
  SafepointStats stats = run_at_safepoint([&] {
    // Another thread's collection may have ended while this one waited to request.
    if (g_count.load(std::memory_order_acquire) != seen) return;
    ran = true;
    e.heap_before = heap_used_bytes();
    const SafepointStats& sp = current_safepoint();
    if (sp.slowest_thread >= 0)
      for (Thread* t : VM::get().threads())
        if (t->id == sp.slowest_thread) e.slowest_where = where(t);
    MarkSweep().run(e);
    e.heap_after = heap_used_bytes();
    e.id = g_count.fetch_add(1, std::memory_order_acq_rel) + 1;
  });
  if (!ran) return;
  e.pause_ns = now_ns() - start;
  e.time_to_safepoint_ns = stats.time_to_safepoint_ns;
  e.threads_stopped = stats.threads;
  e.slowest_thread = stats.slowest_thread;
  e.heap_max = heap_max_bytes();
  if (g_log.load(std::memory_order_relaxed)) std::fprintf(stderr, "%s\n", format_gc_event(e).c_str());
  std::lock_guard<std::mutex> lock(g_last_mutex);
  g_last = e;
}

}  // namespace runtime
