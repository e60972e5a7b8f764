// The profile data model: events as the samplers emit them (DESIGN.md, "Output"),
// interned stack traces, and per-sampler accounting. Samplers fill a Profile; the
// report writers (report_*.h) only read it.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/frame_kind.h"
#include "sampler/profile/distribution.h"
#include "sampler/profile/reasons.h"
#include "sampler/profile/samplers.h"

namespace sampler {

// Frame kinds as in the .jsonl schema: the stack walker's own (base/frame_kinds.def).
using base::FrameKind;
using base::frame_kind_hue;
using base::frame_kind_name;
using base::kFrameKindCount;

struct FrameRef {
  std::string function;
  uint32_t line = 0;
  int32_t bci = -1;
  FrameKind kind = FrameKind::interp;
  bool operator==(const FrameRef& o) const {
    return function == o.function && line == o.line && bci == o.bci && kind == o.kind;
  }
};

using StackTrace = std::vector<FrameRef>;  // top frame first

// Interns stack traces: one id per distinct trace. A trace the walk's depth limit cut
// (`truncated`, its outermost callers missing) is a different trace from the same frames
// complete, so every writer can mark it.
class StackTraceRepository {
 public:
  uint32_t intern(const StackTrace& trace, bool truncated = false);
  const StackTrace& get(uint32_t id) const { return traces_[id]; }
  bool truncated(uint32_t id) const { return id < truncated_.size() && truncated_[id]; }
  size_t size() const { return traces_.size(); }

 private:
  struct Hash {
    size_t operator()(const StackTrace& t) const;
  };
  std::vector<StackTrace> traces_;
  std::vector<bool> truncated_;
  std::unordered_map<StackTrace, uint32_t, Hash> ids_[2];  // [truncated]
};

// DroppedSample: an interruption whose request the thread's store left out of a stretch
// too long to keep whole (ring_full); the samples kept from that stretch stand for it.
enum class EventType : uint8_t { ExecutionSample, NativeMethodSample, SafepointLatency, FailedSample, DroppedSample };
const char* event_type_name(EventType t);
// Whether events of the type name a stack (samples and latencies; not failures or drops).
inline bool has_stack(EventType t) { return t != EventType::FailedSample && t != EventType::DroppedSample; }

struct Event {
  EventType type = EventType::ExecutionSample;
  SamplerId sampler = SamplerId::cooperative;
  uint64_t sample = 0;     // the interruption's id, shared by every sampler under --sampler=all
  int thread = 0;
  uint64_t time_ns = 0;    // when the interruption happened
  bool biased = false;     // ExecutionSample / NativeMethodSample: fell back to the poll-site stack
  std::optional<Reason> reason;  // FailedSample, DroppedSample: why; biased samples: why biased
  uint64_t latency_ns = 0; // SafepointLatency
  uint64_t cpu_ns = 0;     // SafepointLatency: of latency_ns, the time the thread was on a CPU
  uint32_t stack = 0;      // StackTraceRepository id (when has_stack)
  // How many samples this entry stands for. The profiler keeps one entry per distinct
  // (type, sampler, thread, stack, outcome) with its count, and the time and id of the
  // first; only the .jsonl stream has every event. A sample kept from a stretch whose
  // requests did not all fit in the thread's store stands for several (its weight,
  // sampler/request_reservoir.h), so counts are what every share is computed from.
  uint64_t count = 1;
};

// Accounting for one sampler: every interruption ends as a sample or a counted failure.
struct SamplerStats {
  uint64_t interruptions = 0;
  uint64_t samples = 0;                       // ExecutionSample + NativeMethodSample
  // What the samples' weights add beyond one each: dropped ring_full requests that samples
  // kept from the same stretch stand for. The samples' counts add up to samples + this.
  uint64_t represented = 0;
  uint64_t truncated = 0;                     // samples whose stack the depth limit cut (classical, async)
  // reason -> count, in table order; a reason counted zero times may be listed (it is printed)
  std::map<Reason, uint64_t> failed;
  std::map<Reason, uint64_t> biased;          // (these are also samples)
  std::map<Reason, uint64_t> dropped;         // (e.g. ring_full)
  Distribution suspension_ns;                 // how long the thread was held, per interruption
  Distribution latency_ns;                    // request ticks -> served, per sample (cooperative)
  Distribution latency_cpu_ns;                // of each latency, the thread's time on a CPU
  // Interruptions sent but not yet ended when the profile was taken: only in a profile
  // dumped while the program runs (requests waiting for a poll, signals pending).
  uint64_t in_flight = 0;
  // Interruptions whose walk or reconstruction used a pc in code already freed (code
  // unloading; runtime/code_unloading.h): part of the samples or failures above.
  uint64_t freed_code = 0;
};

// The sum of a reason -> count map (a sampler's failed, biased or dropped).
inline uint64_t total(const std::map<Reason, uint64_t>& by_reason) {
  uint64_t n = 0;
  for (const auto& [reason, count] : by_reason) n += count;
  return n;
}

// How many interruptions a sampler ended: as a sample, a failure or a drop. Every
// interruption ends as exactly one, so this equals `interruptions` (all_accounted).
inline uint64_t ended(const SamplerStats& st) { return st.samples + total(st.failed) + total(st.dropped); }
inline bool all_accounted(const SamplerStats& st) { return ended(st) + st.in_flight == st.interruptions; }

// Compiled code replaced and freed while the program ran (--stress-unload).
struct CodeUnloading {
  uint64_t retired = 0;            // replaced code handed to the unloader
  uint64_t freed = 0;              // of it, freed (the rest was still in use at exit)
  uint64_t rounds = 0;             // safepoints that decided
  uint64_t kept_in_use = 0;        // summed over rounds: retired code a pc still lay in
  uint64_t unwalkable_rounds = 0;  // of them, rounds that freed nothing: a stack was not walkable
};

// One garbage collection at a global safepoint (runtime/gc.h's GcEvent, as the reports
// show it): each is an event of the .jsonl and .jfr streams, and the profile keeps their
// totals (Collections).
struct GcPause {
  uint64_t gc = 0;                    // its number, from 1
  bool young = false;                 // young, or full
  std::string cause;                  // "allocation budget", "heap full", "gc-a-lot" (runtime::gc_cause_name)
  int requester = -1;                 // the thread that asked (-1: not a Mini thread)
  uint64_t time_ns = 0;               // the request (CLOCK_MONOTONIC, the clock of Event::time_ns)
  uint64_t time_to_safepoint_ns = 0;  // until every thread was stopped
  uint64_t pause_ns = 0;              // from the request until the threads resumed
  int threads_stopped = 0;            // threads that had to stop
  int slowest_thread = -1;            // the last to stop (-1: none had to be waited for)
  uint64_t slowest_cpu_ns = 0;        // of the time to safepoint, that thread's time on a CPU
  uint64_t heap_before = 0, heap_after = 0;  // bytes in use
  // Its safepoint: id, request and resumption; a full collection that follows a young one
  // in the same safepoint (the young one left no room) shares it.
  uint64_t safepoint = 0;
  uint64_t safepoint_start_ns = 0, safepoint_end_ns = 0;
  bool shares_safepoint = false;
};

// The collections of a run, in all: what the text report and the statistics show.
struct Collections {
  uint64_t count = 0, young = 0, full = 0;
  uint64_t pause_total_ns = 0;
  Distribution pause_ns;               // per collection
  Distribution time_to_safepoint_ns;   // per collection (a shared safepoint counted with the first)
  std::map<int, uint64_t> last_to_stop;  // thread -> collections it was the last to stop for
  void add(const GcPause& gc);
};

struct Profile {
  std::string program;                        // the .mini file
  // The program's files (the program first, then the files it imports) and the file of
  // each function written in an imported one: a function not listed is the program's.
  // A function's name is unique in its program, so frames name their file through it.
  std::vector<std::string> files;
  std::unordered_map<std::string, uint16_t> function_files;
  uint16_t file_of(const std::string& function) const {
    auto it = function_files.find(function);
    return it == function_files.end() ? 0 : it->second;
  }
  const std::string& file_name(uint16_t file) const { return file < files.size() ? files[file] : program; }
  std::vector<SamplerId> samplers;            // in report order
  std::map<SamplerId, SamplerStats> stats;
  std::vector<Event> events;                  // samples, in order of first emission
  StackTraceRepository stacks;
  uint64_t interval_ns = 0;
  // --interval-jitter: each interval was drawn uniformly from interval_ns * (1 +- this),
  // so interval_ns is their mean (0: every interval was interval_ns).
  double interval_jitter = 0;
  // --slowdown sites of the run ("sieve:10=100ns", vm/slowdown.h): time added on purpose.
  std::vector<std::string> slowdowns;
  // How many times control passed each of them, in the same order (the VM counts every
  // pass, on every thread): their time added is passes x ns.
  std::vector<uint64_t> slowdown_passes;
  uint64_t duration_ns = 0;
  // Compiled code kept its lines only at polls and calls (--debug-info=safepoints): every
  // sampler, the oracle too, then names a pc elsewhere by the poll or call before it
  // (its line, its inlined frames), and the report says so.
  bool debug_info_at_safepoints = false;
  // The sampler thread's own CPU time: per visit of a thread (signal, hold and walk, or
  // native walk), and in all (with the recording of handler walks).
  Distribution sampler_cpu_ns;
  uint64_t sampler_thread_cpu_ns = 0;
  CodeUnloading unloading;
  Collections collections;
  // The walks at the polls that served requests (cooperative, safepoint): the frames
  // walked and those taken from the stack watermark's cache, and the time each poll's
  // serving took (from the first request to the mark set again; the monotonic clock, read
  // in tens of nanoseconds, where a thread CPU clock costs a system call).
  struct PollWalks {
    uint64_t polls = 0, frames_walked = 0, frames_cached = 0;
    Distribution time_ns;
  } poll_walks;
  // The sampler thread's schedule (sampler_thread.cpp): the time of a period comes every
  // --interval, and a period visits up to threads_per_period live threads. Each visit due
  // was made (an interruption, or a thread found not running Mini code or a native) or
  // fell in a period the sampler thread missed, still busy with earlier visits when its
  // time came. SamplingRate (report.h) reads these against the interruptions.
  struct Schedule {
    uint64_t periods = 0;         // periods whose time came while the sampler ran
    uint64_t periods_missed = 0;  // of them, skipped: the thread was behind
    uint64_t visits_due = 0;      // Σ over periods (missed ones too) of the threads to visit
    uint64_t visits_missed = 0;   // of them, in missed periods
    uint64_t not_running = 0;     // visits to a thread blocked, in the VM, starting or ending
    Distribution period_ns;       // wall time of each period's visits, to hold against the interval
  } schedule;

  // Adds `e` (e.count samples) to `events`, to the entry with the same type, sampler,
  // thread, stack and outcome if there is one: memory grows with the distinct stacks,
  // not with the length of the run.
  void add_sample(const Event& e);
  // Puts `events` in order of their (first) time; add_sample keeps working after it.
  void sort_by_time();

 private:
  struct SampleKey {
    EventType type;
    SamplerId sampler;
    int thread;
    uint32_t stack;
    bool biased;
    std::optional<Reason> reason;
    bool operator==(const SampleKey&) const = default;
  };
  struct SampleKeyHash {
    size_t operator()(const SampleKey& k) const;
  };
  std::unordered_map<SampleKey, size_t, SampleKeyHash> sample_index_;
};

}  // namespace sampler
