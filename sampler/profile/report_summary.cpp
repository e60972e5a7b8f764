// The text report for several samplers on the same interruptions (`--sampler=all`): about
// one screen, so that the samplers can be read side by side.
//   - what they share, once: the time the thread was stopped and the safepoint latency of
//     the requests served at a poll (the same interruptions serve every sampler);
//   - the top lines by self, one column per sampler, each column's top line marked;
//   - each sampler's top line with its 95% interval and the samples it rests on;
//   - the accounting, one row per sampler, with the reasons of what failed, was biased or
//     was dropped.
// The detail of one sampler (functions, totals) is its own run with --sampler=NAME.
#include <algorithm>

#include <fmt/format.h>

#include "sampler/profile/bias_budget.h"
#include "sampler/profile/report_text.h"

namespace sampler {

namespace {

constexpr size_t kLinesPerSampler = 5;  // each sampler's top lines that get a row
constexpr size_t kMostRows = 12;

std::string percentiles_text(const Distribution& d) {
  Percentiles q = percentiles(d);
  return fmt::format("p50 {}  p99 {}  max {}  (n={})", format_us(q.p50), format_us(q.p99), format_us(q.max), q.n);
}

void shared(std::string& out, const Profile& p, const std::vector<SamplerId>& samplers) {
  // Every sampler records the same stop per interruption it took a sample from: the
  // sampler with the most samples shows it best.
  const SamplerStats* most = nullptr;
  const SamplerStats* at_poll = nullptr;
  std::string waiting;
  for (SamplerId s : samplers) {
    const SamplerStats& st = stats_of(p, s);
    if (!most || st.suspension_ns.size() > most->suspension_ns.size()) most = &st;
    if (stack_taken(s) == StackTaken::at_poll) {
      if (!at_poll) at_poll = &st;
      waiting += (waiting.empty() ? "" : " and ") + std::string(sampler_name(s));
    }
  }
  out += "\nShared by every sampler (nearest-rank percentiles):\n";
  out += fmt::format("  {:<19} {}\n", "thread stopped",
                     most->suspension_ns.empty() ? std::string("none recorded")
                                                 : percentiles_text(most->suspension_ns) +
                                                       ", per sample: in the signal handler or held");
  if (!at_poll)
    out += fmt::format("  {:<19} not applicable: none of these samplers waits for a poll\n", "safepoint latency");
  else if (at_poll->latency_ns.empty())
    out += fmt::format("  {:<19} none recorded\n", "safepoint latency");
  else
  {
    out += fmt::format("  {:<19} {}, signal -> next poll: what {} wait; the others take the stack at once\n",
                       "safepoint latency", percentiles_text(at_poll->latency_ns), waiting);
    out += fmt::format("  {:<19} {}, of each latency the thread's time on a CPU (the rest it waited for one)\n",
                       "  on a CPU", percentiles_text(at_poll->latency_cpu_ns));
  }
}

void top_lines(std::string& out, const Profile& p, const std::vector<SamplerId>& samplers,
               const std::vector<Aggregate>& aggs) {
  // The rows: every sampler's top lines, ordered by the reference's share (the oracle's
  // when it ran: the exact one), then by the largest share any sampler gives the line.
  size_t ref = 0;
  for (size_t i = 0; i < samplers.size(); ++i)
    if (samplers[i] == SamplerId::oracle) ref = i;
  std::vector<std::vector<Row>> sorted;
  for (const Aggregate& a : aggs) sorted.push_back(sorted_rows(a.line_rows(), true));
  std::vector<std::string> names;
  for (const auto& rows : sorted)
    for (size_t k = 0; k < rows.size() && k < kLinesPerSampler; ++k)
      if (std::find(names.begin(), names.end(), rows[k].name()) == names.end()) names.push_back(rows[k].name());
  auto share = [&](size_t i, const std::string& name) -> double {
    for (const Row& r : sorted[i])
      if (r.name() == name) return aggs[i].samples ? double(r.self) / double(aggs[i].samples) : 0;
    return 0;
  };
  auto best = [&](const std::string& name) {
    double m = 0;
    for (size_t i = 0; i < samplers.size(); ++i) m = std::max(m, share(i, name));
    return m;
  };
  std::stable_sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    double ra = share(ref, a), rb = share(ref, b);
    if (ra != rb) return ra > rb;
    return best(a) > best(b);
  });
  size_t nw = 13;
  for (const std::string& n : names) nw = std::max(nw, n.size());
  out += "\nTop lines by self, % of each sampler's samples (* its top line):\n";
  std::string head = fmt::format("  {:<{}}", "function:line", nw);
  for (SamplerId s : samplers) head += fmt::format("  {:>11}", sampler_name(s));
  out += head + "\n";
  for (size_t r = 0; r < names.size() && r < kMostRows; ++r) {
    std::string row = fmt::format("  {:<{}}", names[r], nw);
    for (size_t i = 0; i < samplers.size(); ++i) {
      double v = share(i, names[r]);
      bool top = !sorted[i].empty() && sorted[i][0].name() == names[r];
      row += fmt::format("  {:>11}", v == 0 ? std::string("-") : fmt::format("{:.1f}%{}", 100 * v, top ? "*" : " "));
    }
    out += row + "\n";
  }
  if (names.size() > kMostRows) out += fmt::format("  ... {} more lines\n", names.size() - kMostRows);

  out += "\nTop line per sampler: its share, the 95% confidence interval (Wilson), the samples it rests on:\n";
  size_t sw = 7;
  for (SamplerId s : samplers) sw = std::max(sw, std::string_view(sampler_name(s)).size());
  for (size_t i = 0; i < samplers.size(); ++i) {
    if (sorted[i].empty()) {
      out += fmt::format("  {:<{}}  no samples\n", sampler_name(samplers[i]), sw);
      continue;
    }
    const Row& t = sorted[i][0];
    // Samples kept from a stretch too long to keep whole stand for several each: the
    // share counts by weight, its interval rests on the samples taken, and the row says both.
    uint64_t taken = stats_of(p, samplers[i]).samples;
    std::string rests = aggs[i].samples == taken ? fmt::format("of {}", taken)
                                                 : fmt::format("of {} by weight, {} taken", aggs[i].samples, taken);
    out += fmt::format("  {:<{}}  {:<{}}  {:>6}  {:>12}  {}\n", sampler_name(samplers[i]), sw, t.name(), nw,
                       pct(t.self, aggs[i].samples), format_interval(share_interval(t.self, aggs[i].samples, taken)),
                       rests);
  }
}

std::string by_reason(const char* what, const std::map<Reason, uint64_t>& counts) {
  std::string s;
  for (const auto& [reason, n] : counts)
    if (n) s += (s.empty() ? "" : ", ") + fmt::format("{} {}", reason_name(reason), n);
  return s.empty() ? s : fmt::format("{}: {}", what, s);
}

void accounting(std::string& out, const Profile& p, const std::vector<SamplerId>& samplers) {
  size_t sw = 7;
  for (SamplerId s : samplers) sw = std::max(sw, std::string_view(sampler_name(s)).size());
  out += "\nAccounting per sampler: samples + failed + dropped = interruptions (biased ones are samples):\n";
  out += fmt::format("  {:<{}}  {:>13}  {:>7}  {:>6}  {:>6}  {:>7}\n", "sampler", sw, "interruptions", "samples",
                     "biased", "failed", "dropped");
  for (SamplerId s : samplers) {
    const SamplerStats& st = stats_of(p, s);
    uint64_t accounted = ended(st) + st.in_flight;
    std::vector<std::string> notes;
    if (accounted == st.interruptions)
      notes.push_back("all accounted for");
    else if (accounted < st.interruptions)
      notes.push_back(fmt::format("{} NOT accounted for", st.interruptions - accounted));
    else
      notes.push_back(fmt::format("{} more than the interruptions", accounted - st.interruptions));
    if (st.in_flight) notes.push_back(fmt::format("in flight {} (sent, not yet ended when dumped)", st.in_flight));
    if (st.truncated) notes.push_back(fmt::format("truncated {} (stack cut at the walk's depth limit)", st.truncated));
    for (const auto& [what, counts] : {std::pair{"biased", &st.biased}, std::pair{"failed", &st.failed},
                                       std::pair{"dropped", &st.dropped}}) {
      std::string r = by_reason(what, *counts);
      if (!r.empty()) notes.push_back(r);
    }
    std::string joined;
    for (const std::string& n : notes) joined += (joined.empty() ? "" : "; ") + n;
    out += fmt::format("  {:<{}}  {:>13}  {:>7}  {:>6}  {:>6}  {:>7}  {}\n", sampler_name(s), sw, st.interruptions,
                       st.samples, total(st.biased), total(st.failed), total(st.dropped), joined);
  }
}

}  // namespace

void write_summary(std::string& out, const Profile& p, const std::vector<SamplerId>& samplers) {
  std::vector<Aggregate> aggs;
  for (SamplerId s : samplers) aggs.push_back(aggregate(p, s));
  shared(out, p, samplers);
  top_lines(out, p, samplers, aggs);
  accounting(out, p, samplers);
  std::string budget = bias_budget_text(bias_budgets(p));
  if (!budget.empty()) out += "\n" + budget;
  uint64_t fewest = 0;
  std::string fewest_name;
  for (size_t i = 0; i < samplers.size(); ++i)
    if (aggs[i].samples > 0 && (fewest == 0 || aggs[i].samples < fewest))
      fewest = aggs[i].samples, fewest_name = sampler_name(samplers[i]);
  out += "\nEach sampler's detail (functions, totals, timing): run it alone with --sampler=NAME.\n";
  closing_notes(out, p, fewest, fewest_name);
}

}  // namespace sampler
