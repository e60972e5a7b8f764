#include "sampler/profile/bias_budget.h"

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace sampler {

namespace {

// A profile as counts per key; the keys of both profiles in one index space.
using Counts = std::vector<uint64_t>;

template <typename Key>
struct Keyed {
  std::map<Key, size_t> index;
  size_t of(const Key& k) { return index.emplace(k, index.size()).first->second; }
};

double tvd(const Counts& p, const Counts& q) {
  uint64_t np = 0, nq = 0;
  for (uint64_t c : p) np += c;
  for (uint64_t c : q) nq += c;
  if (np == 0 || nq == 0) return 0;
  double sum = 0;
  for (size_t k = 0; k < std::max(p.size(), q.size()); k++) {
    double a = k < p.size() ? double(p[k]) / double(np) : 0, b = k < q.size() ? double(q[k]) / double(nq) : 0;
    sum += a > b ? a - b : b - a;
  }
  return sum / 2;
}

// A multinomial redraw of `counts` (as many draws as it has samples, each key with its
// share): one binomial per key on what is left.
Counts redraw(const Counts& counts, std::mt19937_64& rng) {
  uint64_t left = 0;
  for (uint64_t c : counts) left += c;
  uint64_t mass = left;
  Counts out(counts.size(), 0);
  for (size_t k = 0; k < counts.size() && left > 0 && mass > 0; k++) {
    double p = std::min(1.0, double(counts[k]) / double(mass));
    uint64_t n = k + 1 == counts.size() ? left : std::binomial_distribution<uint64_t>(left, p)(rng);
    out[k] = n;
    left -= n;
    mass -= counts[k];
  }
  return out;
}

Distance distance(const Counts& p, const Counts& q, int rounds, std::mt19937_64& rng) {
  Distance d;
  d.tvd = tvd(p, q);
  if (rounds <= 0) {
    d.low = d.high = d.tvd;
    return d;
  }
  std::vector<double> draws;
  draws.reserve(size_t(rounds));
  for (int r = 0; r < rounds; r++) draws.push_back(tvd(redraw(p, rng), redraw(q, rng)));
  std::sort(draws.begin(), draws.end());
  d.low = draws[size_t(0.025 * (rounds - 1))];
  d.high = draws[size_t(0.975 * (rounds - 1))];
  return d;
}

}  // namespace

std::vector<BiasBudget> bias_budgets(const Profile& profile, int rounds) {
  Keyed<std::pair<uint16_t, uint32_t>> lines;
  Keyed<std::string> functions;
  std::map<SamplerId, std::pair<Counts, Counts>> counts;  // sampler -> (by line, by function)
  for (const Event& e : profile.events) {
    if (e.type != EventType::ExecutionSample && e.type != EventType::NativeMethodSample) continue;
    const StackTrace& st = profile.stacks.get(e.stack);
    if (st.empty()) continue;
    const FrameRef& top = st.front();
    size_t l = lines.of({profile.file_of(top.function), top.line}), f = functions.of(top.function);
    auto& [by_line, by_function] = counts[e.sampler];
    if (by_line.size() <= l) by_line.resize(l + 1, 0);
    if (by_function.size() <= f) by_function.resize(f + 1, 0);
    by_line[l] += e.count;
    by_function[f] += e.count;
  }
  std::vector<BiasBudget> out;
  auto oracle = counts.find(SamplerId::oracle);
  if (oracle == counts.end()) return out;
  std::mt19937_64 rng(0x6d696e69766dULL);  // the same profile gives the same interval
  for (SamplerId s : profile.samplers) {
    auto it = counts.find(s);
    if (s == SamplerId::oracle || it == counts.end()) continue;
    BiasBudget b;
    b.sampler = s;
    for (uint64_t c : it->second.second) b.samples += c;
    b.lines = distance(it->second.first, oracle->second.first, rounds, rng);
    b.functions = distance(it->second.second, oracle->second.second, rounds, rng);
    out.push_back(b);
  }
  return out;
}

std::string bias_budget_text(const std::vector<BiasBudget>& budgets) {
  if (budgets.empty()) return "";
  size_t sw = 7;
  for (const BiasBudget& b : budgets) sw = std::max(sw, std::string_view(sampler_name(b.sampler)).size());
  std::string out =
      "Bias budget: each sampler's distance from the oracle's profile, by top line and by function: the total "
      "variation distance, the share of samples that would have to move for the two to agree. In brackets, where 95% "
      "of 200 bootstrap redraws of both profiles put it: how much sampling alone moves it.\n";
  out += fmt::format("  {:<{}}  {:<22}  {}\n", "sampler", sw, "lines", "functions");
  auto one = [](const Distance& d) { return fmt::format("{:.3f} [{:.3f}, {:.3f}]", d.tvd, d.low, d.high); };
  for (const BiasBudget& b : budgets)
    out += fmt::format("  {:<{}}  {:<22}  {}\n", sampler_name(b.sampler), sw, one(b.lines), one(b.functions));
  return out;
}

std::optional<BiasBudget> budget_of(const std::vector<BiasBudget>& budgets, SamplerId s) {
  for (const BiasBudget& b : budgets)
    if (b.sampler == s) return b;
  return std::nullopt;
}

}  // namespace sampler
