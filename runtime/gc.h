// The collector: stop-the-world mark-sweep at a global safepoint (runtime/safepoint.h),
// generational without moving anything.
//
// A collection: retire every TLAB, mark what the roots (runtime/gc_roots.h) reach in a
// side bitmap, turn the gaps between marked values into free ranges (runtime/heap.h) and
// resume the threads. Most collections are young: the marks of the values that survived
// earlier ones stay set, marking stops at them, the old values the write barrier recorded
// in the card table are scanned as roots, and only what was allocated since the last
// collection is swept. A full collection (the old generation has doubled since the last
// one, or a young one left no room for an allocation) clears the marks first and sweeps
// the whole heap. Nothing moves: a conservatively scanned frame (gc_roots.h) may name any
// value, so none could be moved safely.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "runtime/gc_roots.h"

namespace runtime {

class Thread;

enum class GcCause : uint8_t {
  allocation_budget,  // the bytes handed out since the last collection reached the budget
  heap_full,          // no free range could hold an allocation that the budget allowed
  a_lot,              // --gc-a-lot: a thread returning from the runtime to Mini code
};
const char* gc_cause_name(GcCause c);

// One collection, as `--gc-log` prints it.
struct GcEvent {
  uint64_t id = 0;
  bool young = false;                // young (the old generation not traced) or full
  GcCause cause = GcCause::allocation_budget;
  int requester = -1;                // the thread that asked (-1: not a Mini thread)
  uint64_t start_ns = 0;             // the request (monotonic_ns, runtime/clock.h)
  uint64_t time_to_safepoint_ns = 0;
  uint64_t pause_ns = 0;             // from the request until the threads resume
  // Its global safepoint: id, request and resumption (SafepointStats). A young collection
  // that left no room for an allocation is followed by a full one in the same safepoint:
  // that one shares the safepoint (its start is the young one's end).
  uint64_t safepoint_id = 0;
  uint64_t safepoint_start_ns = 0, safepoint_end_ns = 0;
  bool shares_safepoint = false;
  int threads_stopped = 0;
  int slowest_thread = -1;           // the last thread to stop (-1: none had to)
  uint64_t slowest_cpu_ns = 0;       // of the time to safepoint, its time on a CPU (SafepointStats)
  std::string slowest_where;         // its top Mini frame: "function (file:line)"
  size_t heap_before = 0, heap_after = 0, heap_max = 0;
  uint64_t objects_live = 0;        // marked after it: a young collection counts the old generation's dead too
  uint64_t young_survivors = 0;     // young: the values allocated since the last collection that survived
  uint64_t dirty_cards = 0;         // young: the cards whose old values were scanned as roots
  RootStats roots;
};

// Collects at a global safepoint, unless a collection has ended since the caller read
// gc_count() == seen. Called in the VM (requester's anchor set) or from a thread that is
// not a Mini thread.
void collect(Thread* requester, GcCause cause, uint64_t seen);
// For an allocation that did not fit (the caller read gc_count() == seen before trying):
// at one global safepoint, with every other thread stopped, calls `allocate(false)` if a
// collection has ended since `seen`, and if that does not succeed (or none has), collects
// and calls `allocate(true)`. So the room a collection makes goes to the allocation that
// asked for it, not to a thread that happens to run first afterwards. Returns whether
// `allocate` succeeded; false means even a collection left no room for it. `allocate`
// must not stop for a safepoint (it runs inside one).
bool collect_for_allocation(Thread* requester, GcCause cause, uint64_t seen,
                            const std::function<bool(bool collected)>& allocate);
uint64_t gc_count();

// `--gc-log`: one line per collection on stderr.
void set_gc_log(bool on);
// `--gc-verify`: walk the heap at every collection and check every exact root against
// it (a root that is not an array is a VM bug: internal error); after a young mark, a
// full one too, which must reach nothing the young one missed (a missing write barrier).
void set_gc_verify(bool on);
// `--gc-a-lot` (a test mode, HotSpot's GCALot): collect each time a Mini thread returns
// from the runtime to Mini code, wherever another thread's collection could stop it;
// young and full collections alternate.
void set_gc_a_lot(bool on);
bool gc_a_lot();
// `--gc-young=off`: every collection full (the bench compares the two).
void set_gc_young(bool on);
std::string format_gc_event(const GcEvent& e);
// Who else learns of each collection, after its safepoint, on the thread that asked for
// it (the profiler records it as an event: sampler/). One observer, set before the program
// runs; nullptr: none.
using GcObserver = void (*)(const GcEvent& e);
void set_gc_observer(GcObserver observer);
// The last collection's event (tests).
GcEvent last_gc_event();

}  // namespace runtime
