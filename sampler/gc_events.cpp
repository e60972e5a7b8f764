// The collections in the profile: the runtime calls on_collection after each one (its
// observer, runtime/gc.h); it is counted in the totals every report shows and written to
// the .jsonl or .jfr stream at once, as a sample's event is. Collections are few (each
// stops every thread), so one mutex serves them all.
#include "runtime/gc.h"
#include "sampler/profiler_state.h"

namespace sampler {

namespace {

GcPause pause_of(const runtime::GcEvent& e) {
  GcPause gc;
  gc.gc = e.id;
  gc.young = e.young;
  gc.cause = runtime::gc_cause_name(e.cause);
  gc.requester = e.requester;
  gc.time_ns = e.start_ns;
  gc.time_to_safepoint_ns = e.time_to_safepoint_ns;
  gc.pause_ns = e.pause_ns;
  gc.threads_stopped = e.threads_stopped;
  gc.slowest_thread = e.slowest_thread;
  gc.slowest_cpu_ns = e.slowest_cpu_ns;
  gc.heap_before = e.heap_before;
  gc.heap_after = e.heap_after;
  gc.safepoint = e.safepoint_id;
  gc.safepoint_start_ns = e.safepoint_start_ns;
  gc.safepoint_end_ns = e.safepoint_end_ns;
  gc.shares_safepoint = e.shares_safepoint;
  return gc;
}

}  // namespace

void on_collection(const runtime::GcEvent& e) {
  GcPause gc = pause_of(e);
  std::string out;
  if (g_state.jsonl.is_open()) append_gc_line(out, gc);
  if (g_state.jfr.is_open()) g_state.jfr.encode_gc(out, gc);
  std::lock_guard<std::mutex> lock(g_state.collections.mutex);
  g_state.collections.totals.add(gc);
  // Under the mutex, so that collections reach the stream in their order.
  if (g_state.jsonl.is_open())
    g_state.jsonl.append(out);
  else if (g_state.jfr.is_open())
    g_state.jfr.append(out);
}

}  // namespace sampler
