// The interruption rate achieved against the rate asked for, and why it fell short
// (report.h, SamplingRate): one reading of the sampler thread's schedule for the text
// report, the statistics, the pages and `compare`.
#include <algorithm>

#include <fmt/format.h>

#include "sampler/profile/report.h"

namespace sampler {

namespace {

uint64_t minus(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

// Every sampler counts the same interruptions and the same signals not sent.
const SamplerStats* any_stats(const Profile& p) {
  for (SamplerId s : p.samplers)
    if (auto it = p.stats.find(s); it != p.stats.end()) return &it->second;
  return p.stats.empty() ? nullptr : &p.stats.begin()->second;
}

}  // namespace

SamplingRate sampling_rate(const Profile& p) {
  SamplingRate r;
  const Profile::Schedule& s = p.schedule;
  r.asked = minus(s.visits_due, s.not_running);
  r.missed = std::min(s.visits_missed, r.asked);
  r.periods_missed = s.periods_missed;
  uint64_t interruptions = 0;
  if (const SamplerStats* st = any_stats(p)) {
    interruptions = st->interruptions;
    auto it = st->failed.find(Reason::signal_coalesced);
    r.coalesced = it == st->failed.end() ? 0 : it->second;
  }
  r.achieved = std::min(minus(interruptions, r.coalesced), minus(r.asked, r.missed));
  r.coalesced = std::min(r.coalesced, minus(r.asked, r.missed + r.achieved));
  r.other = minus(r.asked, r.achieved + r.missed + r.coalesced);
  if (p.interval_ns) r.asked_hz = 1e9 / double(p.interval_ns);
  if (r.asked) r.achieved_hz = r.asked_hz * double(r.achieved) / double(r.asked);
  return r;
}

std::string format_rate(const SamplingRate& r) {
  return fmt::format("{} of {} interruptions asked for ({:.1f}%): {:.1f}/s per running thread against {:.0f}/s",
                     r.achieved, r.asked, r.asked ? 100.0 * double(r.achieved) / double(r.asked) : 0.0,
                     r.achieved_hz, r.asked_hz);
}

std::vector<std::string> rate_shortfall(const Profile& p, const SamplingRate& r) {
  std::vector<std::pair<uint64_t, std::string>> causes;
  if (!r.short_of_asked()) return {};
  if (r.missed) {
    // Late because its own visits outlast the interval, or because it had no core when
    // its time came (it is one more runnable thread): the median period tells which.
    Percentiles q = percentiles(p.schedule.period_ns);
    bool busy = q.p50 > p.interval_ns;
    std::string why = fmt::format("{} in {} periods the sampler thread missed, {} (a period's visits took p50 {}, "
                                  "p99 {} against the {} interval",
                                  r.missed, r.periods_missed,
                                  busy ? "still busy when their time came"
                                       : "off its core when their time came (more runnable threads than cores, or "
                                         "a busy machine)",
                                  format_us(q.p50), format_us(q.p99), format_us(p.interval_ns));
    if (auto it = p.stats.find(SamplerId::classical);
        it != p.stats.end() && !it->second.suspension_ns.empty()) {
      Percentiles held = percentiles(it->second.suspension_ns);
      why += fmt::format("; for classical it waits until each thread's handler runs, then walks it, holding it "
                         "p50 {}, p99 {}",
                         format_us(held.p50), format_us(held.p99));
    }
    causes.emplace_back(r.missed, why + ")");
  }
  if (r.coalesced)
    causes.emplace_back(r.coalesced, fmt::format("{} signals not sent, signal_coalesced: the previous one was still "
                                                 "pending, its thread had not run since (more running threads "
                                                 "than cores, or a busy machine)",
                                                 r.coalesced));
  if (r.other)
    causes.emplace_back(r.other, fmt::format("{} visits that reached no thread (it ended as it was signalled, or "
                                             "the visit was under way when the profile was taken)",
                                             r.other));
  std::stable_sort(causes.begin(), causes.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> out;
  for (auto& [n, text] : causes) out.push_back(std::move(text));
  return out;
}

bool classical_throttles(const Profile& p, const SamplingRate& r) {
  bool classical = std::find(p.samplers.begin(), p.samplers.end(), SamplerId::classical) != p.samplers.end();
  return classical && p.samplers.size() > 1 && r.short_of_asked() && r.missed * 10 >= r.asked;
}

}  // namespace sampler
