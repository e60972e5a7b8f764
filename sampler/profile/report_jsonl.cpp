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
// with its time to safepoint, pause and the last thread to stop. Also the JSON string
// escaping all writers share.
#include <ostream>
#include <unordered_map>

#include "sampler/profile/report.h"

namespace sampler {

namespace {

void append_u_escape(std::string& out, unsigned cp) {
  static const char* hex = "0123456789abcdef";
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += hex[(cp >> shift) & 0xf];
}

// Length of the valid UTF-8 sequence starting at s[i] (2..4), or 0 if it is not one.
size_t utf8_sequence(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  auto cont = [&](size_t k) { return k < s.size() && (b(k) & 0xC0) == 0x80; };
  unsigned c = b(i);
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(i + 1) || !cont(i + 2)) return 0;
    unsigned c1 = b(i + 1);
    if (c == 0xE0 && c1 < 0xA0) return 0;  // overlong
    if (c == 0xED && c1 > 0x9F) return 0;  // surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(i + 1) || !cont(i + 2) || !cont(i + 3)) return 0;
    unsigned c1 = b(i + 1);
    if (c == 0xF0 && c1 < 0x90) return 0;  // overlong
    if (c == 0xF4 && c1 > 0x8F) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '<': case '>': case '&': case 0x7f: append_u_escape(out, c); break;
        default:
          if (c < 0x20) append_u_escape(out, c);
          else out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    size_t n = utf8_sequence(s, i);
    if (n == 0) {
      append_u_escape(out, 0xFFFD);  // not UTF-8: replacement character
      ++i;
      continue;
    }
    std::string_view seq = s.substr(i, n);
    if (seq == "\xE2\x80\xA8") append_u_escape(out, 0x2028);       // line separators end
    else if (seq == "\xE2\x80\xA9") append_u_escape(out, 0x2029);  // a JS line in <script>
    else out += seq;
    i += n;
  }
  out += '"';
}

std::string json_string(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

void append_stack_json(std::string& b, const StackTrace& st) {
  b += '[';
  for (size_t i = 0; i < st.size(); ++i) {
    const FrameRef& f = st[i];
    if (i) b += ',';
    b += "{\"function\":";
    append_json_string(b, f.function);
    b += ",\"line\":";
    b += std::to_string(f.line);
    b += ",\"bci\":";
    b += std::to_string(f.bci);
    b += ",\"kind\":\"";
    b += frame_kind_name(f.kind);
    b += "\"}";
  }
  b += ']';
}

void append_event_line(std::string& b, const Event& e, std::string_view stack_json, bool truncated) {
  b += "{\"event\":\"";
  b += event_type_name(e.type);
  b += "\",\"sampler\":";
  append_json_string(b, sampler_name(e.sampler));
  b += ",\"sample\":";
  b += std::to_string(e.sample);
  b += ",\"thread\":";
  b += std::to_string(e.thread);
  switch (e.type) {
    case EventType::ExecutionSample:
    case EventType::NativeMethodSample:
      b += ",\"time_ns\":";
      b += std::to_string(e.time_ns);
      b += e.biased ? ",\"biased\":true" : ",\"biased\":false";
      if (e.biased && e.reason) {
        b += ",\"reason\":";
        append_json_string(b, reason_name(*e.reason));
      }
      if (truncated) b += ",\"truncated\":true";
      if (e.count > 1) b += ",\"count\":" + std::to_string(e.count);
      b += ",\"stack\":";
      b += stack_json;
      break;
    case EventType::SafepointLatency:
      b += ",\"time_ns\":";
      b += std::to_string(e.time_ns);
      b += ",\"latency_ns\":";
      b += std::to_string(e.latency_ns);
      b += ",\"cpu_ns\":";
      b += std::to_string(e.cpu_ns);
      b += ",\"stack\":";
      b += stack_json;
      break;
    case EventType::FailedSample:
      b += ",\"reason\":";
      append_json_string(b, e.reason ? reason_name(*e.reason) : "");
      break;
    case EventType::DroppedSample:
      b += ",\"time_ns\":";
      b += std::to_string(e.time_ns);
      b += ",\"reason\":";
      append_json_string(b, e.reason ? reason_name(*e.reason) : "");
      break;
  }
  b += "}\n";
}

void append_gc_line(std::string& b, const GcPause& gc) {
  b += "{\"event\":\"GarbageCollection\",\"gc\":" + std::to_string(gc.gc);
  b += gc.young ? ",\"young\":true" : ",\"young\":false";
  b += ",\"cause\":";
  append_json_string(b, gc.cause);
  b += ",\"thread\":" + std::to_string(gc.requester);
  b += ",\"time_ns\":" + std::to_string(gc.time_ns);
  b += ",\"pause_ns\":" + std::to_string(gc.pause_ns);
  b += ",\"time_to_safepoint_ns\":" + std::to_string(gc.time_to_safepoint_ns);
  b += ",\"threads_stopped\":" + std::to_string(gc.threads_stopped);
  b += ",\"slowest_thread\":" + std::to_string(gc.slowest_thread);
  b += ",\"slowest_cpu_ns\":" + std::to_string(gc.slowest_cpu_ns);
  b += ",\"heap_before\":" + std::to_string(gc.heap_before);
  b += ",\"heap_after\":" + std::to_string(gc.heap_after);
  b += ",\"safepoint\":" + std::to_string(gc.safepoint);
  b += "}\n";
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
