// The statistics as one JSON document (`--profile-stats FILE`): what the text report's
// header, accounting and timing lines show, as numbers a program can read without
// parsing text. The schema is in sampler/profile/README.md ("Statistics as JSON"). Percentiles
// come from `percentiles` (report_text.cpp), the text report's own, so the two never
// disagree; times are integer nanoseconds, and a percentile of nothing is null.
#include <ostream>

#include <fmt/format.h>

#include "sampler/profile/bias_budget.h"
#include "sampler/profile/report.h"

namespace sampler {

namespace {

// reason -> count as a JSON object, in the map's order (the table's, by name).
void append_by_reason(std::string& out, const std::map<Reason, uint64_t>& by_reason) {
  out += '{';
  bool first = true;
  for (const auto& [reason, count] : by_reason) {
    if (!first) out += ", ";
    first = false;
    append_json_string(out, reason_name(reason));
    out += fmt::format(": {}", count);
  }
  out += '}';
}

// {"n": N, "p50": ns, "p99": ns, "max": ns}; the three values are null when n is 0.
void append_percentiles(std::string& out, const Distribution& values) {
  Percentiles q = percentiles(values);
  if (q.n == 0) {
    out += "{\"n\": 0, \"p50\": null, \"p99\": null, \"max\": null}";
    return;
  }
  out += fmt::format("{{\"n\": {}, \"p50\": {}, \"p99\": {}, \"max\": {}}}", q.n, q.p50, q.p99, q.max);
}

void append_distance(std::string& out, const Distance& d) {
  out += fmt::format("{{\"tvd\": {:.4f}, \"low\": {:.4f}, \"high\": {:.4f}}}", d.tvd, d.low, d.high);
}

void append_sampler(std::string& out, SamplerId sampler, const SamplerStats& st, const std::optional<BiasBudget>& b) {
  out += "  {\"name\": ";
  append_json_string(out, sampler_name(sampler));
  out += fmt::format(",\n   \"interruptions\": {}, \"samples\": {}, \"truncated\": {}, \"represented\": {},",
                     st.interruptions, st.samples, st.truncated, st.represented);
  out += "\n   \"biased\": ";
  append_by_reason(out, st.biased);
  out += ",\n   \"failed\": ";
  append_by_reason(out, st.failed);
  out += ",\n   \"dropped\": ";
  append_by_reason(out, st.dropped);
  if (st.in_flight > 0) out += fmt::format(",\n   \"in_flight\": {}", st.in_flight);  // a dump while running
  out += fmt::format(",\n   \"accounted\": {},", all_accounted(st) ? "true" : "false");
  out += "\n   \"suspension_ns\": ";
  append_percentiles(out, st.suspension_ns);
  out += ",\n   \"latency_ns\": ";
  append_percentiles(out, st.latency_ns);
  out += ",\n   \"latency_cpu_ns\": ";
  append_percentiles(out, st.latency_cpu_ns);
  auto crashed = st.failed.find(Reason::crashed_in_walk);
  out += fmt::format(",\n   \"stability\": {{\"crashes_caught\": {}, \"freed_code\": {}}},",
                     crashed == st.failed.end() ? 0 : crashed->second, st.freed_code);
  out += "\n   \"bias_budget\": ";
  if (!b) {
    out += "null}";
    return;
  }
  out += "{\"lines\": ";
  append_distance(out, b->lines);
  out += ", \"functions\": ";
  append_distance(out, b->functions);
  out += "}}";
}

// The collections: how many of each kind, their pauses and times to safepoint, and which
// thread was the last to stop how often.
void append_collections(std::string& out, const Collections& c) {
  out += fmt::format("\n \"gc\": {{\"collections\": {}, \"young\": {}, \"full\": {}, \"pause_total_ns\": {},"
                     "\n        \"pause_ns\": ",
                     c.count, c.young, c.full, c.pause_total_ns);
  append_percentiles(out, c.pause_ns);
  out += ",\n        \"time_to_safepoint_ns\": ";
  append_percentiles(out, c.time_to_safepoint_ns);
  out += ",\n        \"last_to_stop\": {";
  bool first = true;
  for (const auto& [thread, n] : c.last_to_stop) {
    out += fmt::format("{}\"{}\": {}", first ? "" : ", ", thread, n);
    first = false;
  }
  out += "}},";
}

// The interruption rate achieved against the one asked for, with its shortfall by
// cause (SamplingRate, report.h) and the schedule it is read from.
void append_rate(std::string& out, const Profile& p) {
  SamplingRate r = sampling_rate(p);
  const Profile::Schedule& s = p.schedule;
  out += fmt::format("\n \"rate\": {{\"asked\": {}, \"achieved\": {}, \"asked_hz\": {:.1f}, \"achieved_hz\": {:.1f}, "
                     "\"short\": {},\n          \"short_by\": {{\"sampler_behind\": {}, \"signal_coalesced\": {}, "
                     "\"other\": {}}},\n          \"periods\": {}, \"periods_missed\": {}, \"visits_due\": {}, "
                     "\"not_running\": {}, \"period_ns\": ",
                     r.asked, r.achieved, r.asked_hz, r.achieved_hz, r.short_of_asked() ? "true" : "false", r.missed,
                     r.coalesced, r.other, s.periods, s.periods_missed, s.visits_due, s.not_running);
  append_percentiles(out, s.period_ns);
  out += fmt::format(",\n          \"classical_throttles\": {}}},", classical_throttles(p, r) ? "true" : "false");
}

}  // namespace

void write_stats_json(const Profile& p, std::ostream& os) {
  std::string out = "{\"program\": ";
  append_json_string(out, p.program);
  out += fmt::format(",\n \"interval_ns\": {},\n \"interval_jitter\": {},\n \"duration_ns\": {},", p.interval_ns,
                     p.interval_jitter, p.duration_ns);
  out += "\n \"slowdowns\": [";
  for (size_t i = 0; i < p.slowdowns.size(); i++) {
    if (i) out += ", ";
    append_json_string(out, p.slowdowns[i]);
  }
  out += "],\n \"slowdown_passes\": [";
  for (size_t i = 0; i < p.slowdown_passes.size(); i++) out += fmt::format("{}{}", i ? ", " : "", p.slowdown_passes[i]);
  out += "],";
  out += fmt::format("\n \"sampler_thread\": {{\"cpu_ns\": {}, \"cpu_per_visit_ns\": ",
                     p.sampler_thread_cpu_ns);
  append_percentiles(out, p.sampler_cpu_ns);
  out += fmt::format("}},\n \"poll_walks\": {{\"polls\": {}, \"frames_walked\": {}, \"frames_cached\": {}, "
                     "\"time_ns\": ",
                     p.poll_walks.polls, p.poll_walks.frames_walked, p.poll_walks.frames_cached);
  append_percentiles(out, p.poll_walks.time_ns);
  const CodeUnloading& u = p.unloading;
  out += fmt::format("}},\n \"code_unloading\": {{\"retired\": {}, \"freed\": {}, \"rounds\": {}, "
                     "\"kept_in_use\": {}, \"unwalkable_rounds\": {}}},",
                     u.retired, u.freed, u.rounds, u.kept_in_use, u.unwalkable_rounds);
  append_collections(out, p.collections);
  append_rate(out, p);
  out += "\n \"samplers\": [";
  bool first = true;
  std::vector<BiasBudget> budgets = bias_budgets(p);
  for (SamplerId sampler : report_samplers(p)) {
    out += first ? "\n" : ",\n";
    first = false;
    append_sampler(out, sampler, stats_of(p, sampler), budget_of(budgets, sampler));
  }
  out += first ? "]}\n" : "\n ]}\n";
  os << out;
}

bool write_stats_file(const Profile& p, const std::string& path, std::string& error) {
  return write_output_file("--profile-stats", path, error, [&](std::ostream& f) { write_stats_json(p, f); });
}

}  // namespace sampler
