// One JSON object per event (`--profile-out FILE.jsonl`), in emission order, with exactly
// the keys and key order of DESIGN.md ("Output"):
//   {"event":"ExecutionSample","sampler":S,"sample":N,"thread":T,"time_ns":N,"biased":B,"stack":[F,...]}
//   {"event":"NativeMethodSample", ...the same keys...}
//   {"event":"SafepointLatency","sampler":S,"sample":N,"thread":T,"time_ns":N,"latency_ns":N,"cpu_ns":N,"stack":[F,...]}
//   {"event":"FailedSample","sampler":S,"sample":N,"thread":T,"reason":R}
//   {"event":"DroppedSample","sampler":S,"sample":N,"thread":T,"time_ns":N,"reason":R}
// F = {"function":NAME,"line":N,"bci":N,"kind":K}, top frame first; "bci" is -1 when
// unknown, "line" 0. The one addition: a biased sample with a known reason carries
// "reason":R right after "biased":true, then "truncated":true for a stack the depth limit
// cut, and "count":N for an event that stands for N samples: an entry of an aggregated
// profile, or in the profiler's own stream (written event by event: event_stream.h) a
// sample kept from a stretch whose requests did not all fit in its thread's store, its
// weight (sampler/request_reservoir.h). DroppedSample (one of this project's events, not
// DESIGN.md's) names each interruption such a store left out, and SafepointLatency's
// "cpu_ns" (this project's too) is the part of its latency the thread spent on a CPU, the
// rest being time it waited for one; its "time_ns" (this project's too) is the
// interruption's. GarbageCollection (this project's: append_gc_line) is one collection
// with its time to safepoint, pause and the last thread to stop.
//
// Each line is an nlohmann-json object (json.h) made text on one line. While the program
// runs the profiler's dump thread makes them, every 100 ms, from the events the recording
// threads kept (event_stream.h); a stack, the longest part of a line, is made text once
// per distinct stack and the line carries that text as its "stack" value, where making it
// again for every event would cost several times the rest of the line.
#include <ostream>
#include <unordered_map>

#include "sampler/profile/json.h"
#include "sampler/profile/report.h"

namespace sampler {

void append_stack_json(std::string& out, const StackTrace& stack) {
  Json frames = Json::array();
  for (const FrameRef& f : stack)
    frames.push_back({{"function", f.function}, {"line", f.line}, {"bci", f.bci}, {"kind", frame_kind_name(f.kind)}});
  append_json_text(out, frames);
}

void append_event_line(std::string& out, const Event& e, std::string_view stack_json, bool truncated) {
  // Set key by key into room for them all, in one object per thread emptied for each line
  // (it keeps its room): an initializer list makes a pair of values for each key first,
  // and a growing object copies its keys as it moves, each costing a stream of events
  // about a third more per line.
  thread_local Json line = [] {
    Json empty(Json::value_t::object);
    empty.get_ref<Json::object_t&>().reserve(10);
    return empty;
  }();
  line.get_ref<Json::object_t&>().clear();
  line["event"] = event_type_name(e.type);
  line["sampler"] = sampler_name(e.sampler);
  line["sample"] = e.sample;
  line["thread"] = e.thread;
  const char* reason = e.reason ? reason_name(*e.reason) : "";
  switch (e.type) {
    case EventType::ExecutionSample:
    case EventType::NativeMethodSample:
      line["time_ns"] = e.time_ns;
      line["biased"] = e.biased;
      if (e.biased && e.reason) line["reason"] = reason;
      if (truncated) line["truncated"] = true;
      if (e.count > 1) line["count"] = e.count;
      break;
    case EventType::SafepointLatency:
      line["time_ns"] = e.time_ns;
      line["latency_ns"] = e.latency_ns;
      line["cpu_ns"] = e.cpu_ns;
      break;
    case EventType::FailedSample:
      line["reason"] = reason;
      break;
    case EventType::DroppedSample:
      line["time_ns"] = e.time_ns;
      line["reason"] = reason;
      break;
  }
  append_json_text(out, line);
  if (has_stack(e.type)) {  // the last key: the object's closing brace moves after it
    out.pop_back();
    out += ",\"stack\":";
    out += stack_json;
    out += '}';
  }
  out += '\n';
}

void append_gc_line(std::string& out, const GcPause& gc) {
  Json line = {{"event", "GarbageCollection"},
               {"gc", gc.gc},
               {"young", gc.young},
               {"cause", gc.cause},
               {"thread", gc.requester},
               {"time_ns", gc.time_ns},
               {"pause_ns", gc.pause_ns},
               {"time_to_safepoint_ns", gc.time_to_safepoint_ns},
               {"threads_stopped", gc.threads_stopped},
               {"slowest_thread", gc.slowest_thread},
               {"slowest_cpu_ns", gc.slowest_cpu_ns},
               {"heap_before", gc.heap_before},
               {"heap_after", gc.heap_after},
               {"safepoint", gc.safepoint}};
  append_json_text(out, line);
  out += '\n';
}

void write_jsonl(const Profile& p, std::ostream& out) {
  std::string b;
  std::unordered_map<uint32_t, std::string> stack_json;  // each distinct stack rendered once
  for (const Event& e : p.events) {
    std::string& sj = stack_json[has_stack(e.type) ? e.stack : UINT32_MAX];
    if (sj.empty()) append_stack_json(sj, event_stack(p, e));
    append_event_line(b, e, sj, has_stack(e.type) && p.stacks.truncated(e.stack));
    if (b.size() > (1 << 16)) {
      out << b;
      b.clear();
    }
  }
  out << b;
}

}  // namespace sampler
