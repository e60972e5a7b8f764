// The statistics as one JSON document (`--profile-stats FILE`): what the text report's
// header, accounting and timing lines show, as numbers a program can read without
// parsing text. The schema is in sampler/README.md ("Statistics as JSON"). Percentiles
// come from `percentiles` (report_text.cpp), the text report's own, so the two never
// disagree; times are integer nanoseconds, and a percentile of nothing is null.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <ostream>

#include <fmt/format.h>

#include "sampler/report.h"

namespace sampler {

namespace {

// reason -> count as a JSON object, in the map's order. The one place this writer reads
// a reason, so that how reasons are named is decided in one line.
void append_by_reason(std::string& out, const std::map<std::string, uint64_t>& by_reason) {
  out += '{';
  bool first = true;
  for (const auto& [reason, count] : by_reason) {
    if (!first) out += ", ";
    first = false;
    append_json_string(out, reason);
    out += fmt::format(": {}", count);
  }
  out += '}';
}

uint64_t total(const std::map<std::string, uint64_t>& by_reason) {
  uint64_t n = 0;
  for (const auto& [reason, count] : by_reason) n += count;
  return n;
}

// {"n": N, "p50": ns, "p99": ns, "max": ns}; the three values are null when n is 0.
void append_percentiles(std::string& out, const std::vector<uint64_t>& values) {
  Percentiles q = percentiles(values);
  if (q.n == 0) {
    out += "{\"n\": 0, \"p50\": null, \"p99\": null, \"max\": null}";
    return;
  }
  out += fmt::format("{{\"n\": {}, \"p50\": {}, \"p99\": {}, \"max\": {}}}", q.n, q.p50, q.p99, q.max);
}

void append_sampler(std::string& out, const std::string& name, const SamplerStats& st) {
  out += "  {\"name\": ";
  append_json_string(out, name);
  out += fmt::format(",\n   \"interruptions\": {}, \"samples\": {}, \"truncated\": {},",
                     st.interruptions, st.samples, st.truncated);
  out += "\n   \"biased\": ";
  append_by_reason(out, st.biased);
  out += ",\n   \"failed\": ";
  append_by_reason(out, st.failed);
  out += ",\n   \"dropped\": ";
  append_by_reason(out, st.dropped);
  out += fmt::format(",\n   \"accounted\": {},", all_accounted(st) ? "true" : "false");
  out += "\n   \"suspension_ns\": ";
  append_percentiles(out, st.suspension_ns);
  out += ",\n   \"latency_ns\": ";
  append_percentiles(out, st.latency_ns);
  out += "}";
}

}  // namespace

bool all_accounted(const SamplerStats& st) {
  return st.samples + total(st.failed) + total(st.dropped) == st.interruptions;
}

void write_stats_json(const Profile& p, std::ostream& os) {
  std::string out = "{\"program\": ";
  append_json_string(out, p.program);
  out += fmt::format(",\n \"interval_ns\": {},\n \"duration_ns\": {},", p.interval_ns, p.duration_ns);
  out += fmt::format("\n \"sampler_thread\": {{\"cpu_ns\": {}, \"cpu_per_visit_ns\": ",
                     p.sampler_thread_cpu_ns);
  append_percentiles(out, p.sampler_cpu_ns);
  out += "},\n \"samplers\": [";
  static const SamplerStats no_stats;
  bool first = true;
  for (const std::string& name : report_samplers(p)) {
    auto it = p.stats.find(name);
    out += first ? "\n" : ",\n";
    first = false;
    append_sampler(out, name, it == p.stats.end() ? no_stats : it->second);
  }
  out += first ? "]}\n" : "\n ]}\n";
  os << out;
}

bool write_stats_file(const Profile& p, const std::string& path, std::string& error) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) {
    error = fmt::format("--profile-stats {}: cannot write: {}", path, std::strerror(errno));
    return false;
  }
  write_stats_json(p, f);
  f.flush();
  if (!f) {
    error = fmt::format("--profile-stats {}: error while writing: {}", path, std::strerror(errno));
    return false;
  }
  return true;
}

}  // namespace sampler
