// The statistics as one JSON document (`--profile-stats FILE`): what the text report's
// header, accounting and timing lines show, as numbers a program can read without
// parsing text. The schema is in sampler/profile/README.md ("Statistics as JSON"). Percentiles
// come from `percentiles` (report_text.cpp), the text report's own, so the two never
// disagree; times are integer nanoseconds, and a percentile of nothing is null. Written
// with two spaces per level (json_text): read it as JSON, not by its lines.
#include <ostream>

#include "sampler/profile/bias_budget.h"
#include "sampler/profile/json.h"
#include "sampler/profile/report.h"

namespace sampler {

namespace {

// reason -> count as a JSON object, in the map's order (the table's, by name).
Json by_reason(const std::map<Reason, uint64_t>& counts) {
  Json out = Json::object();
  for (const auto& [reason, count] : counts) out[reason_name(reason)] = count;
  return out;
}

// {"n": N, "p50": ns, "p99": ns, "max": ns}; the three values are null when n is 0.
Json percentiles_json(const Distribution& values) {
  Percentiles q = percentiles(values);
  if (q.n == 0) return {{"n", 0}, {"p50", nullptr}, {"p99", nullptr}, {"max", nullptr}};
  return {{"n", q.n}, {"p50", q.p50}, {"p99", q.p99}, {"max", q.max}};
}

Json distance(const Distance& d) {
  return {{"tvd", rounded(d.tvd, 4)}, {"low", rounded(d.low, 4)}, {"high", rounded(d.high, 4)}};
}

Json sampler_json(SamplerId sampler, const SamplerStats& st, const std::optional<BiasBudget>& b) {
  Json out = {{"name", sampler_name(sampler)},
              {"interruptions", st.interruptions},
              {"samples", st.samples},
              {"truncated", st.truncated},
              {"represented", st.represented},
              {"biased", by_reason(st.biased)},
              {"failed", by_reason(st.failed)},
              {"dropped", by_reason(st.dropped)}};
  if (st.in_flight > 0) out["in_flight"] = st.in_flight;  // a dump while running
  out["accounted"] = all_accounted(st);
  out["suspension_ns"] = percentiles_json(st.suspension_ns);
  out["latency_ns"] = percentiles_json(st.latency_ns);
  out["latency_cpu_ns"] = percentiles_json(st.latency_cpu_ns);
  auto crashed = st.failed.find(Reason::crashed_in_walk);
  out["stability"] = {{"crashes_caught", crashed == st.failed.end() ? 0 : crashed->second},
                      {"freed_code", st.freed_code}};
  out["bias_budget"] = b ? Json{{"lines", distance(b->lines)}, {"functions", distance(b->functions)}} : Json(nullptr);
  return out;
}

// The collections: how many of each kind, their pauses and times to safepoint, and which
// thread was the last to stop how often.
Json collections_json(const Collections& c) {
  Json last_to_stop = Json::object();
  for (const auto& [thread, n] : c.last_to_stop) last_to_stop[std::to_string(thread)] = n;
  return {{"collections", c.count},
          {"young", c.young},
          {"full", c.full},
          {"pause_total_ns", c.pause_total_ns},
          {"pause_ns", percentiles_json(c.pause_ns)},
          {"time_to_safepoint_ns", percentiles_json(c.time_to_safepoint_ns)},
          {"last_to_stop", last_to_stop}};
}

// The interruption rate achieved against the one asked for, with its shortfall by
// cause (SamplingRate, report.h) and the schedule it is read from.
Json rate_json(const Profile& p) {
  SamplingRate r = sampling_rate(p);
  const Profile::Schedule& s = p.schedule;
  return {{"asked", r.asked},
          {"achieved", r.achieved},
          {"asked_hz", rounded(r.asked_hz, 1)},
          {"achieved_hz", rounded(r.achieved_hz, 1)},
          {"short", r.short_of_asked()},
          {"short_by", {{"sampler_behind", r.missed}, {"signal_coalesced", r.coalesced}, {"other", r.other}}},
          {"periods", s.periods},
          {"periods_missed", s.periods_missed},
          {"visits_due", s.visits_due},
          {"not_running", s.not_running},
          {"period_ns", percentiles_json(s.period_ns)},
          {"classical_throttles", classical_throttles(p, r)}};
}

}  // namespace

void write_stats_json(const Profile& p, std::ostream& os) {
  const CodeUnloading& u = p.unloading;
  Json samplers = Json::array();
  std::vector<BiasBudget> budgets = bias_budgets(p);
  for (SamplerId sampler : report_samplers(p))
    samplers.push_back(sampler_json(sampler, stats_of(p, sampler), budget_of(budgets, sampler)));
  Json doc = {{"program", p.program},
              {"interval_ns", p.interval_ns},
              {"interval_jitter", p.interval_jitter},
              {"duration_ns", p.duration_ns},
              {"slowdowns", p.slowdowns},
              {"slowdown_passes", p.slowdown_passes},
              {"sampler_thread", {{"cpu_ns", p.sampler_thread_cpu_ns}, {"cpu_per_visit_ns", percentiles_json(p.sampler_cpu_ns)}}},
              {"poll_walks",
               {{"polls", p.poll_walks.polls},
                {"frames_walked", p.poll_walks.frames_walked},
                {"frames_cached", p.poll_walks.frames_cached},
                {"time_ns", percentiles_json(p.poll_walks.time_ns)}}},
              {"code_unloading",
               {{"retired", u.retired},
                {"freed", u.freed},
                {"rounds", u.rounds},
                {"kept_in_use", u.kept_in_use},
                {"unwalkable_rounds", u.unwalkable_rounds}}},
              {"gc", collections_json(p.collections)},
              {"rate", rate_json(p)},
              {"samplers", samplers}};
  os << json_text(doc, 2) << "\n";
}

bool write_stats_file(const Profile& p, const std::string& path, std::string& error) {
  return write_output_file("--profile-stats", path, error, [&](std::ostream& f) { write_stats_json(p, f); });
}

}  // namespace sampler
